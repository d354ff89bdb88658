import PostgresClient
import SQLBuilding

/// `orchestrator.checkpoints` (metadata layout 4): where every run that commits in parts
/// records how far it got, in the same transaction as the work it records. One table for both
/// runners (docs/metadata-schema.md):
/// - `kind = 'heavyweight'`: one row per pass of a heavyweight step committed in its staging
///   schema (`pass` its number), and row 0 written with the staging schema and its triggers;
///   deleted by the swap, or when the staging schema is made again;
/// - `kind = 'online'`: one row per store while an `apply --online` of a lightweight step is
///   under way (`pass` the next phase, 0-based; `next_key` within a batched phase); deleted by
///   the switch-over.
/// Each row names the step by its digest (`PlannedStep.digest`). Layout 3 kept the first in
/// `<store>~staging._checkpoint` and the second in the table `orchestrator.online_progress`,
/// now a view of these rows; `moveOnlineProgress` and `movePasses` move what a store half
/// migrated by it left.
enum CheckpointTable {
    static let table = "checkpoints"
    /// The view in place of layout 3's table, with its columns.
    static let onlineView = "online_progress"

    static let statements: [SQL] = [
        """
        CREATE TABLE IF NOT EXISTS \(ident: MetadataSchema.schema, table) (
            store text NOT NULL,
            kind text NOT NULL CHECK (kind IN ('heavyweight', 'online')),
            pass integer NOT NULL,
            step_digest text NOT NULL,
            from_version text,
            to_version text,
            name text,
            next_key bigint,
            rows bigint NOT NULL DEFAULT 0,
            changes_seen bigint,
            table_rows jsonb,
            updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (store, kind, pass)
        )
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_online_idx ON \(ident: MetadataSchema.schema, table) (store) WHERE kind = 'online'",
    ]

    /// `online_progress` as a view of the online rows, with layout 3's columns (what `fleet
    /// status` and scripts read); the last of `MetadataSchema.statements`.
    static let view: SQL = """
        CREATE OR REPLACE VIEW \(ident: MetadataSchema.schema, onlineView) AS
        SELECT store, from_version, to_version, step_digest AS plan_digest, pass AS phase, next_key, updated_at
        FROM \(ident: MetadataSchema.schema, table) WHERE kind = 'online'
        """

    /// Layout 3's table `online_progress`: its rows moved into the table, then dropped (the view
    /// takes its place). First in `MetadataSchema.bootstrap`'s transaction.
    static func moveOnlineProgress(on connection: PostgresConnection) throws {
        let meta = MetadataSchema.schema
        let kind = try connection.execute("SELECT relkind::text AS kind FROM pg_class WHERE oid = to_regclass(\(quoteIdentifier(meta) + "." + onlineView))")
        guard kind.rows.first?.first == "r" else { return }
        for statement in statements { _ = try connection.execute(statement) }
        _ = try connection.execute("""
            INSERT INTO \(ident: meta, table) (store, kind, pass, step_digest, from_version, to_version, next_key, updated_at)
            SELECT store, 'online', phase, plan_digest, from_version, to_version, next_key, updated_at FROM \(ident: meta, onlineView)
            ON CONFLICT DO NOTHING
            """)
        _ = try connection.execute("DROP TABLE \(ident: meta, onlineView)")
    }

    /// Layout 3's `_checkpoint` tables, of the staging schemas `store_schemas` records (and
    /// layout 1's, adopted just before), moved into the table. Last in `MetadataSchema.bootstrap`'s
    /// transaction.
    static func movePasses(on connection: PostgresConnection) throws {
        let staging = try connection.execute("SELECT schema, store, version_name FROM \(ident: MetadataSchema.schema, StoreSchemas.table) WHERE role = 'staging' ORDER BY schema")
        for row in staging.rows {
            guard let schema = row[0], let store = row[1] else { continue }
            try importPasses(from: schema, store: store, to: row[2], on: connection)
        }
    }

    /// A staging schema's `_checkpoint` (layout 3): its rows, and row 0 (the schema was made
    /// and holds no other step's passes), under the fingerprint they carry, which
    /// `PlannedStep.earlierDigests` accepts; an empty table recorded no identity (''), and any
    /// step may continue it, as before. Then the table is dropped (the swap no longer does).
    static func importPasses(from schema: String, store: String, to version: String?, on connection: PostgresConnection) throws {
        let legacy = quoteIdentifier(schema) + "." + quoteIdentifier(legacyTable)
        guard try connection.execute("SELECT to_regclass(\(legacy)) IS NOT NULL AS present").bool(0, "present") == true else { return }
        _ = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, table) (store, kind, pass, step_digest, to_version, name, rows, changes_seen, table_rows, updated_at)
            SELECT \(store)::text, 'heavyweight', 0, coalesce((SELECT min(fingerprint) FROM \(ident: schema, legacyTable)), ''), \(version)::text, 'install', 0, NULL, NULL, clock_timestamp()
            UNION ALL
            SELECT \(store)::text, 'heavyweight', pass, fingerprint, \(version)::text, name, rows, changes_seen, table_rows, finished_at FROM \(ident: schema, legacyTable)
            ON CONFLICT DO NOTHING
            """)
        _ = try connection.execute("DROP TABLE \(ident: schema, legacyTable)")
    }

    /// Layout 3's table of a heavyweight step's passes, in its staging schema.
    static let legacyTable = "_checkpoint"

    /// True when the table exists (layout 4 and later). A session that keeps facts asks once
    /// the table is there: orchestrator never drops it.
    static func exists(on connection: PostgresConnection) throws -> Bool {
        let read = { try connection.execute("SELECT to_regclass(\(quoteIdentifier(MetadataSchema.schema) + "." + table)) IS NOT NULL AS present").bool(0, "present") == true }
        guard let facts = connection.sessionFacts else { return try read() }
        return try facts.value("to_regclass \(table)") { try read() ? "yes" : nil } == "yes"
    }
}
