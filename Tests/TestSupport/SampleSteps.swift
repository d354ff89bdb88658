import Planning
import SQLBuilding

extension StagedWork {
    /// Heavyweight work made by hand for a test: the given passes and swap, a write guard and
    /// change tracking over `shop.item`, staging in `shop~staging`, refused online unless a
    /// catch-up form is given.
    public static func sample(
        passes: [PlannedPass] = [], swap: [PlannedStatement] = [],
        catchUpForm: CatchUpForm = .refused(OnlineRefusal(.onlineUnsupportedUntracedPath, "a sample step with no catch-up"))
    ) -> StagedWork {
        StagedWork(
            passes: passes,
            writeGuard: PlannedStatement("LOCK TABLE \"shop\".\"item\" IN SHARE MODE", lock: .share, summary: "write guard"),
            swap: swap, stagingSchema: "shop~staging",
            changeTracking: ChangeTracking(store: "shop", staging: "shop~staging", sourceTables: ["item"], stagingTables: ["item"]),
            backupSchema: "shop~", catchUpForm: catchUpForm
        )
    }
}
