import ArgumentParser
import Engine

/// The flags `complete` and `rollback` share: the bounds of their one transaction and of the
/// wait for the store's lock (`apply`'s `ApplyLockOptions` carries more than they take).
struct ExpansionLockOptions: ParsableArguments {
    @Option(name: .long, help: "lock_timeout of the transaction, in milliseconds; it is retried with backoff.")
    var lockTimeout: Int = ApplyOptions.defaultLockTimeoutMilliseconds

    @Option(name: .long, help: "idle_in_transaction_session_timeout of the transaction, in milliseconds: how soon after the process stops answering PostgreSQL ends its session and releases its locks.")
    var idleTimeout: Int = ApplyOptions.defaultIdleInTransactionTimeoutMilliseconds

    @Option(name: .long, help: "Seconds to wait for another apply, complete or rollback of the store to finish.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    func validate() throws {
        guard lockTimeout > 0 else { throw ValidationError("--lock-timeout must be a positive number of milliseconds") }
        guard idleTimeout >= 3 else { throw ValidationError("--idle-timeout must be a number of milliseconds, 3 or more") }
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }

    var applyOptions: ApplyOptions {
        ApplyOptions(lockTimeoutMilliseconds: lockTimeout, lockWaitSeconds: lockWait, idleInTransactionTimeoutMilliseconds: idleTimeout)
    }
}
