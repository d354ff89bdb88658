import SQLBuilding

/// What lets a resumed heavyweight step see what it cannot otherwise: writes made to the old
/// store while no `apply` held its write guard (between an interrupted run and the next), and
/// staging rows changed by hand. Statement-level triggers on every table of the old store
/// append one row per writing statement — table, operation, rows — to `<staging>._changes`;
/// each checkpoint (`orchestrator.checkpoints`) records the last change it saw and the row count of every staging table.
///
/// Why statements and not rows: one insert per statement into an append-only table costs
/// writers little and never makes them wait on each other (a counter row would serialize
/// them). It tells which table changed and how, which is enough to refuse; replaying the
/// changed rows (the online-migration issue) needs a row-level log.
public struct ChangeTracking: Sendable, Hashable {
    public static let changesTable = "_changes"
    public static let function = "_record_change"
    /// The triggers installed on each table of the old store, one per operation.
    public static let triggers = ["_orchestrator_insert", "_orchestrator_update", "_orchestrator_delete", "_orchestrator_truncate"]

    public var staging: String
    /// Tables of the old store, each with the triggers.
    public var sourceTables: [String]
    /// Tables of the new store built in `staging`, counted with each checkpoint.
    public var stagingTables: [String]
    /// One transaction before the write guard is taken (CREATE TRIGGER waits for the guard's
    /// lock): the staging schema, anything an earlier run left in it dropped first, the change
    /// log, its function and the triggers. (The passes' checkpoints are rows of
    /// `orchestrator.checkpoints`, metadata layout 4.)
    public var install: [PlannedStatement]

    public init(store: String, staging: String, sourceTables: [String], stagingTables: [String]) {
        self.staging = staging
        self.sourceTables = sourceTables
        self.stagingTables = stagingTables
        var install = [
            PlannedStatement("DROP SCHEMA IF EXISTS \(ident: staging) CASCADE", lock: .accessExclusive, summary: "drop what an earlier run left in \(staging)"),
            PlannedStatement("CREATE SCHEMA \(ident: staging)", lock: .none, summary: "create schema \(staging)"),
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.changesTable) (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    table_name text NOT NULL,
                    operation text NOT NULL,
                    rows bigint NOT NULL,
                    changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """, lock: .accessExclusive, summary: "create the change log of \(store)"),
            // SECURITY DEFINER: applications writing the store need no rights on the staging
            // schema. The search path names the log's schema, so the body holds no names.
            PlannedStatement("""
                CREATE FUNCTION \(ident: staging, Self.function)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path TO \(ident: staging), pg_catalog, pg_temp AS $body$
                DECLARE
                    changed bigint;
                BEGIN
                    IF TG_OP = 'TRUNCATE' THEN
                        changed := -1;
                    ELSE
                        SELECT count(*) INTO changed FROM changed_rows;
                    END IF;
                    IF changed <> 0 THEN
                        INSERT INTO _changes (table_name, operation, rows) VALUES (TG_TABLE_NAME, TG_OP, changed);
                    END IF;
                    RETURN NULL;
                END
                $body$
                """, lock: .none, summary: "create the function recording writes to \(store)"),
        ]
        let events = [("INSERT", "REFERENCING NEW TABLE AS changed_rows "), ("UPDATE", "REFERENCING NEW TABLE AS changed_rows "), ("DELETE", "REFERENCING OLD TABLE AS changed_rows "), ("TRUNCATE", "")]
        for table in sourceTables {
            for (trigger, (event, referencing)) in zip(Self.triggers, events) {
                install.append(PlannedStatement("""
                    CREATE TRIGGER \(ident: trigger) AFTER \(unsafeRaw: event) ON \(ident: store, table) \(unsafeRaw: referencing)FOR EACH STATEMENT EXECUTE FUNCTION \(ident: staging, Self.function)()
                    """, lock: .shareRowExclusive, summary: "record \(event) on \(store).\(table) until the swap"))
            }
        }
        self.install = install
    }

    /// One row per table of `tables` (default: every staging table): `name`, `n` (its rows).
    public func countRows(of tables: [String]? = nil) -> SQL {
        SQL.joined((tables ?? stagingTables).map { "SELECT \($0)::text AS name, count(*) AS n FROM \(ident: staging, $0)" }, separator: "\nUNION ALL\n")
    }

    /// Which staging tables a pass can add rows to or delete from: an entity mapping's stage 1
    /// its destination table, to-one links and stage 3 none. A policy may write anywhere, and
    /// the first pass counts every (empty) table, so that each checkpoint counts them all.
    static func tablesWritten(by pass: PlannedPass, mappings: [ResolvedEntityMapping]) -> [String]? {
        let mapping = mappings.first { $0.name == pass.entityMapping }
        switch pass.stage {
        case .prepare: return nil
        case .createInstances: return mapping.flatMap { $0.policy == nil ? [$0.destinationTable] : nil }
        case .createRelationships: return pass.part == .toOne ? [] : nil
        case .validate: return mappings.contains { $0.policy != nil } ? nil : []
        }
    }

    /// The writes logged after change `seen`, per table and operation (`rows` -1: a TRUNCATE).
    public func changes(after seen: Int) -> SQL {
        """
        SELECT table_name, operation, sum(rows) AS rows, bool_or(rows < 0) AS truncated FROM \(ident: staging, Self.changesTable)
        WHERE id > \(seen) GROUP BY table_name, operation ORDER BY table_name, operation
        """
    }

    /// The last change logged, 0 for none.
    public var lastChange: SQL { "SELECT coalesce(max(id), 0) AS seen FROM \(ident: staging, Self.changesTable)" }

    /// Tables of the old store missing any of the triggers (dropped by hand), as `name`.
    public func untracked(store: String) -> SQL {
        let function = quoteIdentifier(staging) + "." + quoteIdentifier(Self.function) + "()"
        return """
            SELECT t.name FROM (VALUES \(SQL.joined(sourceTables.map { "(\($0)::text)" }, separator: ", "))) AS t(name)
            WHERE (SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = \(store) AND c.relname = t.name AND g.tgfoid = to_regprocedure(\(function))) < \(Self.triggers.count)
            ORDER BY t.name
            """
    }

    /// After the swap the old store (now `old`) holds the function: dropping it drops the
    /// triggers, without touching the new store.
    public static func remove(from old: String) -> PlannedStatement {
        PlannedStatement("DROP FUNCTION IF EXISTS \(ident: old, function)() CASCADE", lock: .accessExclusive, summary: "drop the change triggers from the old store \(old)")
    }
}
