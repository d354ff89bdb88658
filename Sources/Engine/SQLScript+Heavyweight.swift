import Planning
import SQLBuilding

extension SQLScript {
    /// A heavyweight step whose passes are all set-based, as `HeavyweightRun` runs it, in the
    /// script's one transaction: the staging schema and change triggers, the write guard's
    /// lock, the passes, the swap, the schemas' records, then the triggers (and a retired old
    /// store) dropped.
    /// `body` runs before the step's metadata and history, `cleanup` after them.
    func heavyweightLines(_ step: PlannedStep, _ work: StagedWork) -> (body: [String], cleanup: [String]) {
        let staging = work.stagingSchema, tracking = work.changeTracking
        let (old, role) = work.oldStorePlace(store: store)
        var lines = [ownershipGuard(staging, role: .staging), ownershipGuard(old, role: role)]
        lines += statementLines(tracking.install, counted: false)
        lines.append(StoreSchemas.registration(staging, role: .staging, store: store, version: step.to).inlined + ";")
        lines += statementLines([work.writeGuard], counted: false)
        for (number, pass) in work.passes.enumerated() {
            lines.append("-- pass \(number + 1) of \(work.passes.count + 1): \(pass.name)")
            // Stage 1 counts the rows its INSERT of the destination rows wrote, as apply does
            // (`HeavyweightRun.countsRows`).
            let counted = pass.statements.lastIndex { HeavyweightRun.countsRows($0, of: pass) }
            for (index, statement) in pass.statements.enumerated() {
                lines += statementLines([statement], counted: false)
                if index == counted { lines.append(countRows()) }
            }
        }
        lines.append("-- pass \(work.passes.count + 1) of \(work.passes.count + 1): swap")
        lines += statementLines(work.swap, counted: false)
        lines.append(StoreSchemas.unregistration(staging).inlined + ";")
        lines.append(StoreSchemas.registration(old, role: role, store: store, version: step.from, chainFinished: false).inlined + ";")
        var cleanup = statementLines([ChangeTracking.remove(from: old)], counted: false)
        if role == .retired {
            cleanup += ["-- drop the old store \(old) (--no-backup)", "DROP SCHEMA \(quoteIdentifier(old)) CASCADE;", StoreSchemas.unregistration(old).inlined + ";"]
        }
        return (lines, cleanup)
    }

    /// A `DO` block stopping the script when `schema` exists and is not recorded as this
    /// store's `role` schema: never dropped or replaced (`StoreSchemas.conflict`).
    func ownershipGuard(_ schema: String, role: StoreSchemas.Role) -> String {
        let table = quoteIdentifier(MetadataSchema.schema) + "." + quoteIdentifier(StoreSchemas.table)
        return guardBlock(
            condition: "EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(quoteLiteral(schema))) AND NOT EXISTS (SELECT 1 FROM \(table) WHERE schema = \(quoteLiteral(schema)) AND store = \(quoteLiteral(store)) AND role = \(quoteLiteral(role.rawValue)))",
            message: "schema \(schema) exists and was not made by orchestrator as the \(role.description) of store \(store); it is never dropped or replaced"
        )
    }
}
