import SQLBuilding

/// Rows that would make a change of the step fail (a to-one made required without a value to
/// backfill, a new uniqueness constraint over duplicates) are counted before any change: the
/// step's first statements stop it, naming how many rows and the first `_pk`s, so the
/// transaction rolls back with the store untouched.
///
/// Written against the source store (its names), as a `DO` block, so `plan` prints it and
/// `apply` runs it like any other statement.
struct DataCheck: SchemaChange {
    /// The source table.
    var table: String
    /// `WHERE` condition on the source table's rows, from quoted identifiers and literals only.
    var offending: String
    /// What the rows lack: "rows of Recipe without chef (Recipe.chef made required)".
    var problem: String
    var hint: String
    /// Narrows the offending rows to those whose `column` links to rows of `entities` in
    /// `table` (a table of the same schema, which `offending` cannot name).
    var linkingTo: (column: String, table: String, entities: [String])?

    func statements(in schema: String) -> [PlannedStatement] {
        var rows = "SELECT \(quoteIdentifier("_pk")) FROM \(quoteIdentifier(schema)).\(quoteIdentifier(table)) WHERE \(offending)"
        if let link = linkingTo {
            rows += " AND \(quoteIdentifier(link.column)) IN (SELECT \(quoteIdentifier("_pk")) FROM \(quoteIdentifier(schema)).\(quoteIdentifier(link.table))"
                + " WHERE \(quoteIdentifier("_entity")) IN (\(entityList(link.entities))))"
        }
        let body = """
            DECLARE
                offending bigint;
                first_keys text;
            BEGIN
                SELECT count(*) INTO offending FROM (\(rows)) AS r;
                IF offending > 0 THEN
                    SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (\(rows) ORDER BY 1 LIMIT 5) AS k;
                    RAISE EXCEPTION USING ERRCODE = 'check_violation',
                        MESSAGE = format(\(quoteLiteral("%s " + problem.replacingOccurrences(of: "%", with: "%%") + "; first _pk: %s")), offending, first_keys),
                        HINT = \(quoteLiteral(hint));
                END IF;
            END
            """
        let tag = Self.dollarTag(avoiding: body)
        return [PlannedStatement(
            SQL(unsafeRaw: "DO \(tag)\n\(body)\n\(tag)"),
            lock: .accessShare, summary: "check: no \(problem)"
        )]
    }

    /// `$check$`, or `$check1$`, … when the body happens to contain it.
    static func dollarTag(avoiding body: String) -> String {
        var tag = "$check$"
        var n = 0
        while body.contains(tag) {
            n += 1
            tag = "$check\(n)$"
        }
        return tag
    }
}
