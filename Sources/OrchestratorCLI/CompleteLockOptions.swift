import ArgumentParser
import Engine

/// The flags `complete` and `fleet complete` share: the bound of the completing transaction's
/// locks, the wait for another apply or complete of the store, and `--force`. (`apply`'s
/// `ApplyLockOptions` adds `--idle-timeout` and `--allow-data-loss`, which completing does not
/// take: its consent to the deferred drops was given to `apply --expand`.)
struct CompleteLockOptions: ParsableArguments {
    @Option(name: .long, help: "lock_timeout of the transaction, in milliseconds; it is retried with backoff.")
    var lockTimeout: Int = ApplyOptions.defaultLockTimeoutMilliseconds

    @Option(name: .long, help: "Seconds to wait for another apply or complete of the store to finish.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    @Flag(name: .long, help: "End the sessions still using the previous version's views (pg_terminate_backend), then complete.")
    var force = false

    func validate() throws {
        guard lockTimeout > 0 else { throw ValidationError("--lock-timeout must be a positive number of milliseconds") }
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }

    var applyOptions: ApplyOptions { ApplyOptions(lockTimeoutMilliseconds: lockTimeout, lockWaitSeconds: lockWait) }
}
