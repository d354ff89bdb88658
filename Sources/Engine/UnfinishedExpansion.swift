import Planning
import PostgresClient
import SQLBuilding

/// An `apply --expand` stopped before its switch-over (stopped between batches, killed, failed)
/// after a phase made the schema of views serving the store's version (`OldVersionViews`, made
/// early when a rename comes before a backfill). No expansion is recorded until the
/// switch-over, so `orchestrator.expansions` does not name it; its online checkpoint and that
/// schema do. The old release goes on through the views; the new version is not served yet.
/// `apply --expand` again continues the run from its checkpoint; `rollback --model` undoes
/// what it ran (`ExpansionRollback.rollBackUnfinished`).
public struct UnfinishedExpansion: Sendable, Hashable {
    public var store: String
    /// The store's version (its metadata's) and the run's target.
    public var from: String
    public var to: String
    /// The 0-based index of the first phase the run has not done: it stopped before phase
    /// `nextPhase + 1`.
    public var nextPhase: Int
    /// The schemas `<store>@<version>` there are, by name: the one serving `from`, and any
    /// other the store has.
    public var versionSchemas: [String]
    /// The schema serving `from` through views.
    public var viewsSchema: String

    /// The store's unfinished expansion; nil when no online run of it is recorded, or the run
    /// made no schema of views (a plain `apply --online`, or an `--expand` stopped before it).
    public static func read(store: String, on connection: PostgresConnection) throws -> UnfinishedExpansion? {
        guard try CheckpointTable.exists(on: connection) else { return nil }
        let run = try connection.execute("""
            SELECT from_version, to_version, pass FROM \(ident: MetadataSchema.schema, CheckpointTable.table)
            WHERE store = \(store) AND kind = 'online'
            """)
        guard let row = run.rows.first, let from = row[0], let to = row[1] else { return nil }
        let viewsSchema = OldVersionViews.schemaName(store: store, version: from)
        let schemas = try connection.execute("""
            SELECT nspname FROM pg_namespace
            WHERE nspname = \(viewsSchema) OR starts_with(nspname, \(store + "@"))
            ORDER BY nspname
            """).rows.compactMap { $0[0] }
        guard schemas.contains(viewsSchema) else { return nil }
        return UnfinishedExpansion(store: store, from: from, to: to, nextPhase: Int(row[2] ?? "") ?? 0, versionSchemas: schemas, viewsSchema: viewsSchema)
    }
}
