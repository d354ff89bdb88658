import SQLBuilding

/// Stage 3 of a heavyweight step under `apply --online`, split around the write guard so that
/// the time writes wait does not grow with the store (docs/online-migrations.md):
/// 1. `build`, after the catch-up rounds and before the guard, in one transaction on the
///    staging tables (which the application does not use): statistics, foreign keys (each
///    checking every row), unique constraints and indexes; and the touched-row log, a trigger
///    on every staging table recording the key of each row written from then on.
/// 2. The rounds after the build run with `session_replication_role = replica` in their own
///    transaction: a round deletes destination rows and makes them again with the same key,
///    which the foreign keys' actions (CASCADE, SET NULL) and checks must not act on. The
///    touched-row trigger fires all the same (`ENABLE ALWAYS`).
/// 3. `guarded`, after the last round under the guard: the NOT NULLs and checks of to-one
///    columns (set by every round's stage 2, so they cannot come before), each foreign key
///    checked again for the rows written since the build (those holding it, and those a
///    deleted key left pointing nowhere, through the index on its column), the count checks
///    over every row, and the touched-row log dropped.
public struct OnlineStageThree: Sendable, Hashable {
    public static let touchedTable = "_touched_rows"
    public static let function = "_record_touched_row"
    public static let trigger = "_orchestrator_touched"

    /// Before the guard, one transaction.
    public var build: [PlannedStatement]
    /// Under the guard, after the last round, in the swap's transaction.
    public var guarded: [PlannedStatement]
    /// Whether `build` has committed: the touched-row log is there.
    public var isBuilt: SQL

    /// In the rounds' transactions once built: foreign keys neither check nor act.
    public static let withoutForeignKeys: SQL = "SET LOCAL session_replication_role = replica"
    public static let withForeignKeys: SQL = "SET LOCAL session_replication_role = origin"

    init(stageThree: StageThreeStatements) {
        let schemas = stageThree.schemas
        let staging = schemas.staging
        let touched = TouchedRows(staging: staging)
        let tables = schemas.destination.tables
        build = touched.install(on: tables.filter(\.kind.isHierarchy).map(\.name)) + [stageThree.analyze()] + stageThree.constraints()
        guarded = stageThree.deferred()
            + [PlannedStatement("ANALYZE \(ident: staging, Self.touchedTable)", lock: .shareUpdateExclusive, summary: "stage 3: statistics of the touched-row log")]
            // The checks go through the indexes: a plan scanning a table would grow with the store.
            + [PlannedStatement("SET LOCAL enable_seqscan = off", lock: .none, summary: "stage 3: the checks of the touched rows read through the indexes")]
            + tables.flatMap { table in table.foreignKeys.map { touched.recheck($0, of: table) } }
            + [PlannedStatement("SET LOCAL enable_seqscan = DEFAULT", lock: .none, summary: "stage 3: plans as usual again")]
            + stageThree.countChecks()
            + [PlannedStatement(
                "DROP FUNCTION \(ident: staging, Self.function)() CASCADE", lock: .accessExclusive,
                summary: "drop the touched-row triggers from the new tables"
            ), PlannedStatement("DROP TABLE \(ident: staging, Self.touchedTable)", lock: .accessExclusive, summary: "drop the touched-row log")]
        isBuilt = "SELECT to_regclass(\(quoteIdentifier(staging) + "." + quoteIdentifier(Self.touchedTable))) IS NOT NULL AS present"
    }
}

/// The touched-row log of `OnlineStageThree` and the foreign key checks reading it.
struct TouchedRows {
    var staging: String

    func install(on tables: [String]) -> [PlannedStatement] {
        let log = OnlineStageThree.touchedTable
        var statements = [
            PlannedStatement("""
                CREATE TABLE \(ident: staging, log) (table_name text NOT NULL, pk bigint NOT NULL, PRIMARY KEY (table_name, pk))
                """, lock: .accessExclusive, summary: "create the log of the new rows written after stage 3's build"),
            PlannedStatement("""
                CREATE FUNCTION \(ident: staging, OnlineStageThree.function)() RETURNS trigger LANGUAGE plpgsql
                SET search_path TO \(ident: staging), pg_catalog, pg_temp AS $body$
                BEGIN
                    IF TG_OP <> 'INSERT' THEN
                        INSERT INTO \(ident: log) (table_name, pk) VALUES (TG_TABLE_NAME, OLD._pk) ON CONFLICT DO NOTHING;
                    END IF;
                    IF TG_OP <> 'DELETE' THEN
                        INSERT INTO \(ident: log) (table_name, pk) VALUES (TG_TABLE_NAME, NEW._pk) ON CONFLICT DO NOTHING;
                    END IF;
                    RETURN NULL;
                END
                $body$
                """, lock: .none, summary: "create the function logging the key of each new row written"),
        ]
        for table in tables {
            statements.append(PlannedStatement("""
                CREATE TRIGGER \(ident: OnlineStageThree.trigger) AFTER INSERT OR UPDATE OR DELETE ON \(ident: staging, table) \
                FOR EACH ROW EXECUTE FUNCTION \(ident: staging, OnlineStageThree.function)()
                """, lock: .shareRowExclusive, summary: "log the keys of \(staging).\(table) rows written after the build"))
            statements.append(PlannedStatement(
                "ALTER TABLE \(ident: staging, table) ENABLE ALWAYS TRIGGER \(ident: OnlineStageThree.trigger)",
                lock: .shareRowExclusive, summary: "the log records the rounds' writes too, which run as a replica"
            ))
        }
        return statements
    }

    /// The rows breaking `foreignKey` among those the log names: rows of its table written
    /// since the build, and rows pointing at a key of the referenced table deleted since (and
    /// not inserted again). A join table (no `_pk`, no log) is checked whole.
    func recheck(_ foreignKey: ForeignKey, of table: TableLayout) -> PlannedStatement {
        let referenced = foreignKey.referencedTable
        let missing: SQL = "NOT EXISTS (SELECT 1 FROM \(ident: staging, referenced) AS p WHERE p._pk = x.\(ident: foreignKey.column))"
        let rows: SQL
        if table.kind.isHierarchy {
            rows = """
                SELECT x._pk FROM \(ident: staging, table.name) AS x WHERE x._pk IN \(logged(table.name)) AND x.\(ident: foreignKey.column) IS NOT NULL AND \(missing)
                UNION
                SELECT x._pk FROM \(ident: staging, table.name) AS x WHERE x.\(ident: foreignKey.column) IN (
                    SELECT t.pk FROM \(ident: staging, OnlineStageThree.touchedTable) AS t
                    WHERE t.table_name = \(literal: referenced) AND NOT EXISTS (SELECT 1 FROM \(ident: staging, referenced) AS p WHERE p._pk = t.pk)
                )
                """
        } else {
            rows = "SELECT x.\(ident: foreignKey.column) AS _pk FROM \(ident: staging, table.name) AS x WHERE x.\(ident: foreignKey.column) IS NOT NULL AND \(missing)"
        }
        var statement = DataCheck.raising(
            rows: rows,
            problem: "rows of \(table.name) whose \(foreignKey.column) names no row of \(foreignKey.referencedTable) (foreign key \(foreignKey.name))",
            hint: "a row written during the migration left a link behind; the old store is unchanged, run apply again",
            errorCode: "foreign_key_violation"
        )
        statement.summary = "stage 3: foreign key \(foreignKey.name) for the rows written after the build"
        return statement
    }

    private func logged(_ table: String) -> SQL {
        "(SELECT pk FROM \(ident: staging, OnlineStageThree.touchedTable) WHERE table_name = \(literal: table))"
    }
}
