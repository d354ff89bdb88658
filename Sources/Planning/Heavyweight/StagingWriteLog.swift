import SQLBuilding

/// What lets the swap trust the staging tables without counting them: a statement-level
/// trigger on each, created with it, appends one row to `<staging>._staging_writes` for every
/// statement that writes the table (insert, update, delete, truncate) in a transaction that
/// orchestrator did not mark as its own. Every transaction orchestrator runs marks itself
/// (`runnerSetting`, set with its timeouts: `ExecutionPolicy`), so the log stays empty unless
/// someone else wrote the staging tables, and the swap reads the log instead of counting
/// millions of rows. A statement writing no row is logged too (a statement trigger cannot
/// see how many rows it wrote without making every insert keep them all).
///
/// A staging schema made by an earlier release has no log: the swap then counts its tables,
/// as it always did (`checked(tables:)` tells which). So does a table whose trigger is gone
/// or disabled.
public enum StagingWriteLog {
    public static let table = "_staging_writes"
    public static let function = "_record_staging_write"
    public static let trigger = "_orchestrator_staging_write"
    /// The setting orchestrator's transactions carry (`SET LOCAL`), with `runnerMark`.
    public static let runnerSetting = "orchestrator.runner"
    public static let runnerMark = "on"

    /// In the prepare pass, after the staging tables `tables`: the log, its function and a
    /// trigger on each table.
    static func install(staging: String, tables: [String]) -> [PlannedStatement] {
        var statements = [
            PlannedStatement("""
                CREATE TABLE \(ident: staging, table) (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    table_name text NOT NULL,
                    operation text NOT NULL,
                    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """, lock: .accessExclusive, summary: "create the log of writes to \(staging) by other sessions"),
            // SECURITY DEFINER and the search path as for the change log (`ChangeTracking`).
            PlannedStatement("""
                CREATE FUNCTION \(ident: staging, function)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path TO \(ident: staging), pg_catalog, pg_temp AS $body$
                BEGIN
                    IF current_setting(\(literal: runnerSetting), true) IS DISTINCT FROM \(literal: runnerMark) THEN
                        INSERT INTO \(unsafeRaw: table) (table_name, operation) VALUES (TG_TABLE_NAME, TG_OP);
                    END IF;
                    RETURN NULL;
                END
                $body$
                """, lock: .none, summary: "create the function recording writes to \(staging) by other sessions"),
        ]
        for name in tables {
            statements.append(PlannedStatement("""
                CREATE TRIGGER \(ident: trigger) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(ident: staging, name) FOR EACH STATEMENT EXECUTE FUNCTION \(ident: staging, function)()
                """, lock: .shareRowExclusive, summary: "record writes to \(staging).\(name) by other sessions until the swap"))
        }
        return statements
    }

    /// In the swap, before the staging schema becomes the store: the triggers (with their
    /// function) and the log go, so the live tables carry none. `IF EXISTS`: a staging schema
    /// made by an earlier release has neither.
    static func remove(staging: String) -> [PlannedStatement] {
        [
            PlannedStatement(
                "DROP FUNCTION IF EXISTS \(ident: staging, function)() CASCADE", lock: .accessExclusive,
                summary: "drop the triggers recording writes to \(staging) by other sessions"
            ),
            PlannedStatement("DROP TABLE IF EXISTS \(ident: staging, table)", lock: .accessExclusive, summary: "drop the log of writes to \(staging)"),
        ]
    }

    /// Whether `staging` has the log (a schema made by an earlier release has not), as `logged`.
    public static func isPresent(staging: String) -> SQL {
        "SELECT to_regclass(\(quoteIdentifier(staging) + "." + quoteIdentifier(table))) IS NOT NULL AS logged"
    }

    /// The writes logged, per table and operation (`name`, `operation`, `statements`), and each
    /// table of `tables` whose trigger is missing or disabled (`operation` NULL), in one read.
    /// Only on a staging schema that has the log (`isPresent`).
    public static func checked(staging: String, tables: [String]) -> SQL {
        """
        SELECT w.table_name AS name, w.operation, count(*) AS statements FROM \(ident: staging, table) AS w GROUP BY 1, 2
        UNION ALL
        SELECT t.name, NULL, 0 FROM (VALUES \(SQL.joined(tables.map { "(\($0)::text)" }, separator: ", "))) AS t(name)
        WHERE NOT EXISTS (
            SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(staging) AND c.relname = t.name AND g.tgname = \(trigger) AND g.tgenabled <> 'D'
        )
        ORDER BY 1, 2
        """
    }
}
