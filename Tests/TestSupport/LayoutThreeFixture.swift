import Foundation
import PostgresClient
import SQLBuilding

/// The metadata schema exactly as the previous release (metadata layout 3) made it, for a store
/// that release left half migrated. Its DDL is copied from that release's
/// `Sources/Engine/MetadataSchema.swift` (`git show 4d550a3^:Sources/Engine/MetadataSchema.swift`,
/// the commit before layout 4), written out as SQL: no `checkpoints`, `runs` or `expansions`,
/// `controls` without the postponement columns, and `online_progress` a table of its own that
/// its first `apply --online` made (not the view layout 4 keeps).
public enum LayoutThreeFixture {
    /// That release's `MetadataSchema.statements`, in its order.
    public static let metadataSchema = #"""
        CREATE SCHEMA IF NOT EXISTS "orchestrator";
        CREATE TABLE IF NOT EXISTS "orchestrator"."meta" (
            key text PRIMARY KEY,
            value text NOT NULL
        );
        CREATE TABLE IF NOT EXISTS "orchestrator"."stores" (
            store text PRIMARY KEY,
            model_name text NOT NULL,
            version_name text NOT NULL,
            model_hash text NOT NULL,
            entity_hashes jsonb NOT NULL,
            version_identifiers jsonb NOT NULL DEFAULT '[]',
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE IF NOT EXISTS "orchestrator"."model_versions" (
            model_name text NOT NULL,
            version_name text NOT NULL,
            model_hash text NOT NULL,
            entity_hashes jsonb NOT NULL,
            format text NOT NULL,
            definition text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (model_name, model_hash)
        );
        CREATE TABLE IF NOT EXISTS "orchestrator"."migrations" (
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
        );
        CREATE INDEX IF NOT EXISTS migrations_store_idx ON "orchestrator"."migrations" (store, id);
        CREATE TABLE IF NOT EXISTS "orchestrator"."store_schemas" (
            schema text PRIMARY KEY,
            store text NOT NULL,
            role text NOT NULL CHECK (role IN ('staging', 'backup', 'retired')),
            version_name text,
            chain_finished boolean NOT NULL DEFAULT true,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE IF NOT EXISTS "orchestrator"."controls" (
            store text PRIMARY KEY,
            paused boolean NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            updated_by text NOT NULL DEFAULT current_user
        );
        INSERT INTO "orchestrator"."meta" (key, value) VALUES ('layout_version', '3')
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
        """#

    /// That release's `online_progress`, made by its first `apply --online`.
    public static let onlineProgress = """
        CREATE TABLE IF NOT EXISTS "orchestrator"."online_progress" (
            store text PRIMARY KEY,
            from_version text NOT NULL,
            to_version text NOT NULL,
            plan_digest text NOT NULL,
            phase integer NOT NULL,
            next_key bigint,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// That release's checkpoint table, made in the staging schema with the change log.
    public static func checkpointTable(staging: String) -> String {
        """
        CREATE TABLE \(quoteIdentifier(staging))."_checkpoint" (
            pass integer PRIMARY KEY,
            name text NOT NULL,
            fingerprint text NOT NULL,
            rows bigint NOT NULL,
            changes_seen bigint NOT NULL,
            table_rows jsonb NOT NULL,
            finished_at timestamptz NOT NULL DEFAULT clock_timestamp()
        )
        """
    }

    /// The rows layout 3 has columns for, by table.
    public static let kept: [(table: String, columns: String)] = [
        ("meta", "key, value"),
        ("stores", "store, model_name, version_name, model_hash, entity_hashes, version_identifiers, created_at, updated_at"),
        ("model_versions", "model_name, version_name, model_hash, entity_hashes, format, definition, recorded_at"),
        ("migrations", "id, store, kind, from_version, to_version, from_hash, to_hash, statements, rows, started_at, finished_at, duration_ms, applied_by, outcome, error"),
        ("store_schemas", "schema, store, role, version_name, chain_finished, created_at"),
        ("controls", "store, paused, updated_at, updated_by"),
    ]

    /// Replaces today's metadata schema by layout 3's, made by its own DDL, holding the same
    /// stores, versions, history, schemas and controls; what layout 4 adds (checkpoints, runs,
    /// expansions) is gone, as it never was. With `onlineProgress`, that table too, empty.
    public static func metadata(on connection: PostgresConnection, onlineProgress: Bool = false) throws {
        try connection.transaction {
            try connection.execute(#"ALTER SCHEMA "orchestrator" RENAME TO "orchestrator_layout4""#)
            try connection.execute(SQL(unsafeRaw: metadataSchema))
            if onlineProgress { try connection.execute(SQL(unsafeRaw: Self.onlineProgress)) }
            for (table, columns) in kept {
                let overriding = table == "migrations" ? " OVERRIDING SYSTEM VALUE" : ""
                let conflict = table == "meta" ? " ON CONFLICT (key) DO NOTHING" : ""
                try connection.execute(SQL(unsafeRaw: """
                    INSERT INTO "orchestrator"."\(table)" (\(columns))\(overriding)
                    SELECT \(columns) FROM "orchestrator_layout4"."\(table)"\(conflict)
                    """))
            }
            try connection.execute(#"SELECT setval(pg_get_serial_sequence('"orchestrator"."migrations"', 'id'), coalesce(max(id), 0) + 1, false) FROM "orchestrator"."migrations""#)
            try connection.execute(#"DROP SCHEMA "orchestrator_layout4" CASCADE"#)
        }
    }

    /// The staging schema as that release left it: no write log (`StagingWriteLog`, later).
    public static func staging(_ staging: String, on connection: PostgresConnection) throws {
        try connection.execute(SQL(unsafeRaw: "DROP FUNCTION IF EXISTS \(quoteIdentifier(staging))._record_staging_write() CASCADE"))
        try connection.execute(SQL(unsafeRaw: "DROP TABLE IF EXISTS \(quoteIdentifier(staging))._staging_writes"))
    }

    /// The tables and columns of the metadata schema, one line each, to compare with layout 3's.
    public static func shape(on connection: PostgresConnection) throws -> [String] {
        try connection.execute("""
            SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END AS line
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
            WHERE n.nspname = 'orchestrator' AND c.relkind IN ('r', 'v') AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY 1
            """).rows.compactMap { $0[0] }
    }
}
