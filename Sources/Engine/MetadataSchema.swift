import PostgresClient
import SQLBuilding

/// The `orchestrator` schema: store metadata, every model version applied, and the history of
/// migrations. Layout documented in docs/metadata-schema.md; a public contract.
public enum MetadataSchema {
    public static let schema = "orchestrator"
    /// Bumped when the metadata tables change shape; kept in orchestrator.meta.
    public static let layoutVersion = 4

    static let statements: [SQL] = [
        "CREATE SCHEMA IF NOT EXISTS \(ident: schema)",
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "meta") (
            key text PRIMARY KEY,
            value text NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "stores") (
            store text PRIMARY KEY,
            model_name text NOT NULL,
            version_name text NOT NULL,
            model_hash text NOT NULL,
            entity_hashes jsonb NOT NULL,
            version_identifiers jsonb NOT NULL DEFAULT '[]',
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "model_versions") (
            model_name text NOT NULL,
            version_name text NOT NULL,
            model_hash text NOT NULL,
            entity_hashes jsonb NOT NULL,
            format text NOT NULL,
            definition text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (model_name, model_hash)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "migrations") (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            store text NOT NULL,
            kind text NOT NULL,
            from_version text,
            to_version text NOT NULL,
            from_hash text,
            to_hash text NOT NULL,
            statements jsonb NOT NULL,
            rows bigint NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL,
            finished_at timestamptz NOT NULL,
            duration_ms bigint NOT NULL,
            applied_by text NOT NULL,
            outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
            error text
        )
        """,
        "CREATE INDEX IF NOT EXISTS migrations_store_idx ON \(ident: schema, "migrations") (store, id)",
        // Layout 2: the schemas made beside stores, so that nothing else is dropped for them.
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, StoreSchemas.table) (
            schema text PRIMARY KEY,
            store text NOT NULL,
            role text NOT NULL CHECK (role IN ('staging', 'backup', 'retired')),
            version_name text,
            chain_finished boolean NOT NULL DEFAULT true,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        // Layout 3: `orchestrator control pause|resume`, read between the batches of a run.
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, StoreControls.table) (
            store text PRIMARY KEY,
            paused boolean NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            updated_by text NOT NULL DEFAULT current_user
        )
        """,
        ExpansionRecord.table,
    ] + CheckpointTable.statements + [
        CheckpointTable.view,
    ] + StoreRuns.statements + [
        """
        INSERT INTO \(ident: schema, "meta") (key, value) VALUES ('layout_version', \(literal: layoutVersion))
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
        """,
    ]

    /// Creates the metadata schema when missing, or brings an older layout up to this one in
    /// place (every statement is idempotent; layout 1 lacks `store_schemas`, and its backup and
    /// staging schemas are adopted into it; layout 2 lacks `controls`; layout 3 lacks
    /// `checkpoints`, and what its runs left is moved into it, `CheckpointTable`, and `runs` and
    /// the postponement columns of `controls`). Concurrent callers serialize on an advisory
    /// lock, so six processes starting at once all succeed.
    public static func bootstrap(on connection: PostgresConnection) throws {
        if try isCurrent(on: connection) { return }
        try connection.transaction {
            try connection.advisoryTransactionLock(key: PostgresConnection.advisoryLockKey(for: "orchestrator:metadata"))
            try CheckpointTable.moveOnlineProgress(on: connection)
            for statement in statements {
                _ = try connection.execute(statement)
            }
            try StoreSchemas.adoptLayoutOneSchemas(on: connection)
            try CheckpointTable.movePasses(on: connection)
        }
    }


    /// True when the metadata has the `store_schemas` table (layout 2 and later).
    static func hasStoreSchemas(on connection: PostgresConnection) throws -> Bool {
        try hasTable(StoreSchemas.table, on: connection)
    }

    /// True when the metadata has every table of this layout: `store_schemas` (layout 2),
    /// `controls` (layout 3), `checkpoints` and `runs` (layout 4), `expansions` (added to
    /// layout 4 by `apply --expand`; an older release's metadata gains it the same way).
    static func isCurrent(on connection: PostgresConnection) throws -> Bool {
        try [StoreSchemas.table, StoreControls.table, CheckpointTable.table, StoreRuns.table, ExpansionRecord.name].allSatisfy { try hasTable($0, on: connection) }
    }

    /// True when the metadata schema exists (reading never creates it).
    public static func exists(on connection: PostgresConnection) throws -> Bool {
        try hasTable("stores", on: connection)
    }

    /// True when the metadata table `name` is there and this user may use it: the rows
    /// `information_schema.tables` shows, looked up by name in pg_class's index (the view
    /// compares the schema name as another type and so reads all of pg_class, which a server
    /// with thousands of stores makes slow, several times for every store `apply` runs on).
    /// A session that keeps facts (`fleet apply`'s) asks once: orchestrator never drops them.
    static func hasTable(_ name: String, on connection: PostgresConnection) throws -> Bool {
        guard let facts = connection.sessionFacts else { return try readHasTable(name, on: connection) }
        return try facts.value("metadata table \(name)") { try readHasTable(name, on: connection) ? "yes" : nil } == "yes"
    }

    private static func readHasTable(_ name: String, on connection: PostgresConnection) throws -> Bool {
        !(try connection.execute("""
            SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(schema) AND c.relname = \(name) AND c.relkind IN ('r', 'v', 'f', 'p')
              AND (pg_catalog.pg_has_role(c.relowner, 'USAGE')
                   OR pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                   OR pg_catalog.has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))
            """)).isEmpty
    }
}
