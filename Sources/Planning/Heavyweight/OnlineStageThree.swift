import SQLBuilding

/// Stage 3 of a heavyweight step under `apply --online`, split around the write guard so that
/// the time writes wait does not grow with the store (docs/online-migrations.md):
/// 1. `build`, after the catch-up rounds and before the guard, in one transaction on the
///    staging tables (which the application does not use): statistics, the NOT NULLs and
///    checks of to-one columns, foreign keys, unique constraints and indexes (each checking
///    every row), the to-many counts of every row; and the touched-row log (`TouchedRows`),
///    a trigger on every staging table recording the keys of each row written from then on
///    and of the rows it links, before and after the write; and the triggers holding the
///    required links of rows a round inserts until its stage 2 links them
///    (`RequiredLinkPlaceholders`).
/// 2. The rounds after the build run with `session_replication_role = replica` in their own
///    transaction: a round deletes destination rows and makes them again with the same key,
///    which the foreign keys' actions (CASCADE, SET NULL) and checks must not act on. The
///    touched-row and placeholder triggers fire all the same (`ENABLE ALWAYS`).
/// 3. `guarded`, after the last round under the guard, reading only the logged rows through
///    the indexes: the required links still missing, each foreign key (rows naming a logged
///    key no row has), the to-many counts of the logged owners; then the triggers and the
///    log are dropped. Everything else the build proved and the constraints kept since.
public struct OnlineStageThree: Sendable, Hashable {
    public static let touchedTable = "_touched_rows"
    public static let function = "_record_touched_row"
    public static let trigger = "_orchestrator_touched"
    public static let placeholderTrigger = "_orchestrator_unlinked"

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
        let placeholders = RequiredLinkPlaceholders(staging: staging)
        let tables = schemas.destination.tables
        build = touched.install(on: tables) + (stageThree.analyze().map { [$0] } ?? []) + stageThree.deferred() + stageThree.constraints()
        build += placeholders.install(on: tables) + stageThree.countChecks()
        // The checks go through the indexes: a plan scanning a table would grow with the store.
        guarded = [
            PlannedStatement("ANALYZE \(ident: staging, Self.touchedTable)", lock: .shareUpdateExclusive, summary: "stage 3: statistics of the touched-row log"),
            PlannedStatement("SET LOCAL enable_seqscan = off", lock: .none, summary: "stage 3: the checks of the touched rows read through the indexes"),
        ]
        guarded += placeholders.checks(of: tables, touched: touched)
        guarded += tables.flatMap { table in table.foreignKeys.map { touched.recheck($0, of: table) } }
        guarded += stageThree.countChecks(only: touched.logged)
        guarded.append(PlannedStatement("SET LOCAL enable_seqscan = DEFAULT", lock: .none, summary: "stage 3: plans as usual again"))
        guarded += placeholders.drop(on: tables)
        guarded += [
            PlannedStatement("DROP FUNCTION \(ident: staging, Self.function)() CASCADE", lock: .accessExclusive, summary: "drop the touched-row triggers from the new tables"),
            PlannedStatement("DROP TABLE \(ident: staging, Self.touchedTable)", lock: .accessExclusive, summary: "drop the touched-row log"),
        ]
        isBuilt = "SELECT to_regclass(\(quoteIdentifier(staging) + "." + quoteIdentifier(Self.touchedTable))) IS NOT NULL AS present"
    }
}
