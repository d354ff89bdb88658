import SQLBuilding

/// The swap of a heavyweight step, in one transaction: the old store moves aside (kept as
/// `<store>~`, or retired to be dropped after the swap), the staging schema becomes the store,
/// and the association, checkpoint and change-log tables go, and the staging tables' write log
/// with its triggers.
struct SwapStatements {
    var store: String
    var staging: String

    /// Without a backup, the old store is only renamed here: dropping its tables would wait for
    /// the write guard's lock, which is released once the swap has committed (the engine drops
    /// `<store>~retired` then).
    func statements(keepsBackup: Bool) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        let retired: String
        if keepsBackup {
            retired = HeavyweightMigration.backupSchema(for: store)
            statements.append(PlannedStatement("DROP SCHEMA IF EXISTS \(ident: retired) CASCADE", lock: .accessExclusive, summary: "drop the previous backup \(retired)"))
            statements.append(PlannedStatement("ALTER SCHEMA \(ident: store) RENAME TO \(ident: retired)", lock: .none, summary: "keep the old store as \(retired)"))
        } else {
            retired = HeavyweightMigration.retiredSchema(for: store)
            statements.append(PlannedStatement("DROP SCHEMA IF EXISTS \(ident: retired) CASCADE", lock: .accessExclusive, summary: "drop a leftover \(retired)"))
            statements.append(PlannedStatement("ALTER SCHEMA \(ident: store) RENAME TO \(ident: retired)", lock: .none, summary: "move the old store aside as \(retired), dropped after the swap"))
        }
        statements += [
            // The change triggers stay on the old tables, with their function, until the
            // write guard is gone (dropping them now would wait for it): `ChangeTracking.remove`.
            PlannedStatement(
                "ALTER FUNCTION \(ident: staging, ChangeTracking.function)() SET SCHEMA \(ident: retired)", lock: .none,
                summary: "move the change triggers' function to \(retired) with the old tables"
            ),
        ]
        statements += StagingWriteLog.remove(staging: staging)
        statements += [
            PlannedStatement("ALTER SCHEMA \(ident: staging) RENAME TO \(ident: store)", lock: .none, summary: "install the new store as \(store)"),
            PlannedStatement("DROP VIEW \(ident: store, HeavyweightMigration.associationTable)", lock: .accessExclusive, summary: "drop the association view"),
            PlannedStatement(
                "DROP TABLE \(ident: store, HeavyweightMigration.associationRowsTable), \(ident: store, ChangeTracking.changesTable)",
                lock: .accessExclusive, summary: "drop the association table and the change log"
            ),
        ]
        return statements
    }
}
