import ArgumentParser
import Engine
import Foundation
import PostgresClient

/// `--lock-wait` of the commands besides `apply` that read or write a store: how long they wait
/// for the store's lock (`restore`, `adopt`) and for any lock another session holds on a table
/// they read or write (orchestrator's metadata, the store's catalog).
struct LockWaitOptions: ParsableArguments {
    @Option(name: .long, help: "Seconds to wait for a lock another session holds (an apply of the same store, a lock on orchestrator's tables): the holder is named while waiting; then exit 1.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    func validate() throws {
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }

    /// Says who holds the lock of `store` while the command waits.
    func onWait(store: String) -> ([AdvisoryLockHolder]) -> Void {
        { holders in
            printNotice("waiting up to \(String(format: "%g", lockWait)) s (--lock-wait) for store \(store), which is being migrated by \(holders.map(\.description).joined(separator: "; "))")
        }
    }
}
