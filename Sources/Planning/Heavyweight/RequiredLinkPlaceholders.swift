import ObjectModel
import SQLBuilding

/// Required to-one columns between stage 3's build and the write guard (`OnlineStageThree`).
/// The build gives them their real constraints (`SET NOT NULL`, the checks requiring them for
/// some entities), proving every row there; but a catch-up round after it inserts rows before
/// its stage 2 links them, which those constraints would refuse (PostgreSQL cannot defer
/// them). So a `BEFORE INSERT OR UPDATE` trigger on the new table writes a placeholder where
/// such a row would hold NULL: the row's own key negated, which no row has (keys start at 1)
/// and no two rows share (a uniqueness constraint over the column holds); stage 2 then links
/// the row. A row still holding it under the guard is one whose required link is missing: it
/// was written after the build, so the touched-row log names it, and the check of the logged
/// rows stops the step as the constraint would.
struct RequiredLinkPlaceholders {
    /// Whether `column` (of row alias `row`) holds a placeholder.
    static func isPlaceholder(_ row: String, _ column: String) -> SQL { "\(ident: row, column) < 0" }

    var staging: String

    /// A required column of `table`, with the entities requiring it (nil: every row).
    struct Required {
        var column: String
        var entities: [String]?
        var constraint: String?
    }

    static func required(_ table: TableLayout) -> [Required] {
        DeferredConstraints.notNull(table).map { Required(column: $0, entities: nil, constraint: nil) }
            + DeferredConstraints.checks(table).compactMap { check in
                guard case .requiredFor(let column, let entities) = check.kind else { return nil }
                return Required(column: column, entities: entities, constraint: check.name)
            }
    }

    /// Whether rows of `table` may hold a placeholder in `column`.
    static func holds(_ column: String, of table: String, in layout: StoreLayout) -> Bool {
        layout.tables.first { $0.name == table }.map { required($0).contains { $0.column == column } } ?? false
    }

    static func function(of table: String) -> String { StoreNaming.shortened("_unlinked_" + table) }

    /// After the build's constraints: the trigger and its function, per table with required links.
    func install(on tables: [TableLayout]) -> [PlannedStatement] {
        tables.flatMap { table -> [PlannedStatement] in
            let required = Self.required(table)
            guard !required.isEmpty else { return [] }
            let fills: [SQL] = required.map { link in
                let entities: SQL = link.entities.map { " AND NEW.\(ident: "_entity") IN (\(literals: $0))" } ?? ""
                return "IF NEW.\(ident: link.column) IS NULL\(entities) THEN NEW.\(ident: link.column) := -NEW.\(ident: "_pk"); END IF;"
            }
            let function = Self.function(of: table.name)
            return [
                PlannedStatement("""
                    CREATE FUNCTION \(ident: staging, function)() RETURNS trigger LANGUAGE plpgsql AS $body$
                    BEGIN
                        \(SQL.joined(fills, separator: "\n    "))
                        RETURN NEW;
                    END
                    $body$
                    """, lock: .none, summary: "create the function holding the required links of \(staging).\(table.name) rows until stage 2 sets them"),
                PlannedStatement("""
                    CREATE TRIGGER \(ident: OnlineStageThree.placeholderTrigger) BEFORE INSERT OR UPDATE ON \(ident: staging, table.name) \
                    FOR EACH ROW EXECUTE FUNCTION \(ident: staging, function)()
                    """, lock: .shareRowExclusive, summary: "hold the required links of \(staging).\(table.name) rows a round inserts"),
                PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ENABLE ALWAYS TRIGGER \(ident: OnlineStageThree.placeholderTrigger)",
                    lock: .shareRowExclusive, summary: "the rounds run as a replica"
                ),
            ]
        }
    }

    /// Under the guard: the logged rows still holding a placeholder stop the step, naming the
    /// table, the column and the first keys (SQLSTATE 23502 for a NOT NULL, 23514 for a check,
    /// as the constraint's own failure); then the triggers go.
    func checks(of tables: [TableLayout], touched: TouchedRows) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        for table in tables {
            for link in Self.required(table) {
                var rows: SQL = """
                    SELECT x._pk FROM \(ident: staging, table.name) AS x
                    WHERE x._pk IN \(touched.logged(table.name)) AND \(Self.isPlaceholder("x", link.column))
                    """
                if let entities = link.entities { rows.append(" AND x.\(ident: "_entity") IN (\(literals: entities))") }
                let rule = link.constraint.map { "check \($0)" } ?? "NOT NULL"
                var statement = DataCheck.raising(
                    rows: rows,
                    problem: "rows of \(table.name) whose \(link.column) is null (\(rule))",
                    hint: "a row written during the migration lacks a required link; the old store is unchanged",
                    errorCode: link.constraint == nil ? "not_null_violation" : "check_violation"
                )
                statement.summary = "stage 3: \(table.name).\(link.column) required, for the rows written after the build"
                statements.append(statement)
            }
        }
        return statements
    }

    func drop(on tables: [TableLayout]) -> [PlannedStatement] {
        tables.filter { !Self.required($0).isEmpty }.map { table in
            PlannedStatement(
                "DROP FUNCTION \(ident: staging, Self.function(of: table.name))() CASCADE", lock: .accessExclusive,
                summary: "drop the trigger holding the required links of \(staging).\(table.name)"
            )
        }
    }
}
