import Planning

/// A step that builds tables beside the store (a heavyweight step's staging schema, an online
/// rebuild's tables and change logs) while a `FOR ALL TABLES` publication publishes the
/// database (`replicationAllTables`): their rows are published too, and a subscriber that lacks
/// those tables stops on them, for good, which orchestrator cannot prevent (PostgreSQL 15
/// cannot leave a table out of `FOR ALL TABLES`; docs/replication-reference.md). So, as for
/// data loss, `apply` runs it only with consent (`--allow-all-tables-publication`).
public struct AllTablesPublicationNotAllowed: Error, CustomStringConvertible {
    /// Each such step as "step n of m ('A' -> 'B'): <hazard message>".
    public var steps: [String]

    public var description: String {
        "(\(ReplicationHazards.allTables)) \(steps.joined(separator: "; ")); nothing was changed (publish the store FOR TABLES IN SCHEMA or FOR TABLE instead, "
            + "or run again with --allow-all-tables-publication once every subscriber of the publication can take those rows)"
    }

    public static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard !options.allowAllTablesPublication else { return }
        var steps: [String] = []
        for (index, step) in plan.steps.enumerated() {
            guard let hazard = step.hazards.first(where: { $0.code == ReplicationHazards.allTables }) else { continue }
            let from = step.from.map { "'\($0)' -> " } ?? ""
            steps.append("step \(index + 1) of \(plan.steps.count) (\(from)'\(step.to)'): \(hazard.message)")
        }
        if !steps.isEmpty { throw AllTablesPublicationNotAllowed(steps: steps) }
    }
}
