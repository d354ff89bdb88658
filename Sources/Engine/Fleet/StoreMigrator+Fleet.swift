import Foundation
import Planning

extension StoreMigrator {
    /// `apply` for a store of a fleet: the same steps and checks, but the plan is made once,
    /// under the store's lock. `apply` plans first without the lock so that a refused store
    /// leaves the database untouched; in a fleet the metadata schema is there already (the
    /// store is in it, and making it again is one query), and `fleet status` and `fleet plan`
    /// are the look before the leap.
    ///
    /// With `cohortPlan` (`fleet apply --plan`), the plan made under the lock must be the
    /// cohort's saved one, for this store's schema; else nothing is changed.
    func applyUnderLock(options: ApplyOptions, cohortPlan: CohortPlan? = nil) throws -> ApplyReport {
        let deferred = try StoreCleanup.removeLeftovers(
            store: store, on: connection, lockWaitSeconds: options.lockWaitSeconds, policy: options.executionPolicy, deferring: true, onLockWait: { _ in }
        )
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: { _ in })
        defer { lock.release() }
        if let cohortPlan { try cohortPlan.requireSame(as: try plan(), migrator: self, online: options.online) }
        return try applyHoldingLock(options: options, deferred: deferred)
    }
}
