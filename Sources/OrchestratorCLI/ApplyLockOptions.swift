import ArgumentParser
import Engine

/// The flags `apply` and `fleet apply` share, with one help text each: how long a migration
/// transaction may make others wait and may sit idle, how long the command waits for another
/// apply's lock, and the consent to lose data.
struct ApplyLockOptions: ParsableArguments {
    @Option(name: .long, help: "lock_timeout of each migration transaction, in milliseconds: the longest a reader or writer waits behind one of apply's lock requests; a transaction that times out is retried with backoff.")
    var lockTimeout: Int = ApplyOptions.defaultLockTimeoutMilliseconds

    @Option(name: .long, help: "idle_in_transaction_session_timeout of each migration transaction and of the heavyweight write guard, in milliseconds: how soon after the process stops answering (SIGSTOP, a paused VM) PostgreSQL ends its sessions and releases their locks.")
    var idleTimeout: Int = ApplyOptions.defaultIdleInTransactionTimeoutMilliseconds

    @Option(name: .long, help: "Seconds to wait for another apply of the same store to finish, or for a lock another session holds on orchestrator's tables or the store's catalog (the holder is named while waiting); then exit 1.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    @Flag(name: .long, help: "Run steps that drop entities, attributes or relationships (and their data), or leave rows behind (a mapping model that does not read them): the backup alone is not consent.")
    var allowDataLoss = false

    @Flag(name: .long, help: "Run a step that builds tables beside the store while a FOR ALL TABLES publication publishes them (replicationAllTables): their rows reach its subscribers, which stop on them unless they have those tables.")
    var allowAllTablesPublication = false

    func validate() throws {
        guard lockTimeout > 0 else { throw ValidationError("--lock-timeout must be a positive number of milliseconds") }
        guard idleTimeout >= 3 else { throw ValidationError("--idle-timeout must be a number of milliseconds, 3 or more") }
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }
}
