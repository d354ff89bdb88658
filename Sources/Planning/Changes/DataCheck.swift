import SQLBuilding

/// Rows that would make a change of the step fail (a to-one made required without a value to
/// backfill, a new uniqueness constraint over duplicates) are counted before any change: the
/// step's first statements stop it, naming how many rows and the first `_pk`s, so the
/// transaction rolls back with the store untouched.
///
/// Written against the source store (its names), as a `DO` block, so `plan` prints it and
/// `apply` runs it like any other statement.
struct DataCheck: SchemaChange {
    var kind: ChangeKind { .dataCheck(self) }

    /// The source table.
    var table: String
    /// `WHERE` condition on the source table's rows; inline literals only, no binds.
    var offending: SQL
    /// What the rows lack: "rows of Recipe without chef (Recipe.chef made required)".
    var problem: String
    var hint: String
    /// Narrows the offending rows to those whose `column` links to rows of `entities` in
    /// `table` (a table of the same schema, which `offending` cannot name).
    var linkingTo: (column: String, table: String, entities: [String])?

    func statements(in schema: String) -> [PlannedStatement] {
        var rows: SQL = "SELECT \(ident: "_pk") FROM \(ident: schema, table) WHERE \(offending)"
        if let link = linkingTo {
            rows.append("""
                 AND \(ident: link.column) IN (SELECT \(ident: "_pk") FROM \(ident: schema, link.table) \
                WHERE \(ident: "_entity") IN (\(literals: link.entities)))
                """)
        }
        return [Self.raising(rows: rows, problem: problem, hint: hint)]
    }

    /// A `DO` block raising `errorCode` when `rows` (a query selecting `_pk`) finds any row,
    /// naming how many and the first five keys.
    static func raising(rows: SQL, problem: String, hint: String, errorCode: String = "check_violation") -> PlannedStatement {
        let message = "%s " + problem.replacingOccurrences(of: "%", with: "%%") + "; first _pk: %s"
        let body: SQL = """

            DECLARE
                offending bigint;
                first_keys text;
            BEGIN
                SELECT count(*) INTO offending FROM (\(rows)) AS r;
                IF offending > 0 THEN
                    SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (\(rows) ORDER BY 1 LIMIT 5) AS k;
                    RAISE EXCEPTION USING ERRCODE = \(literal: errorCode),
                        MESSAGE = format(\(literal: message), offending, first_keys),
                        HINT = \(literal: hint);
                END IF;
            END

            """
        return PlannedStatement("DO \(SQL.dollarQuoted(body, tag: "check"))", lock: .accessShare, summary: "check: no \(problem)")
    }
}

extension DataCheck: OnlineChange {
    /// A read of the rows: writes go on.
    func onlineForm(in schema: String) -> OnlineForm {
        .phases(statements(in: schema).map { OnlinePhase(summary: $0.summary, statements: [$0], lock: .accessShare, hold: .scan) })
    }
}
