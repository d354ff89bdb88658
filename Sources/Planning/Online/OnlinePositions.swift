import SQLBuilding

/// Positions numbered across rows under `apply --online`: each owner's links numbered from 0
/// in the order of `orderBy`, as the offline step's `row_number()` numbers them on the final
/// data. A write adds, removes or moves one link, and the positions of its owner's other links
/// shift with it, so no trigger can give a row its position from the row alone. Instead:
/// 1. a `BEFORE` trigger on the links' table logs the owner of every link written (both owners
///    of a link moved) in a log table, and clears the position of a link left without owner;
/// 2. batches number the owners in ranges of their keys (the owner's table walked; the range
///    restricts both the numbered links and the rows updated, each read through the owner
///    column's index, so a batch does not read the whole table);
/// 3. batches take the logged owners out of the log (`DELETE … RETURNING`: a log row of a
///    write committing later stays for the next phase) and number their links again, twice, so
///    each pass has fewer owners left than the last;
/// 4. the switch-over, after dropping the triggers (ACCESS EXCLUSIVE on the tables written, so
///    no write comes in between), numbers the owners logged since and drops the log: a read of
///    the log and of those owners' links through the owner column's index, not of the table.
struct OnlinePositions {
    /// The links' table, holding the order column.
    var table: String
    var column: String
    /// The links' owner (the partition of the numbering).
    var owner: String
    var orderBy: String
    /// Columns identifying a link: `_pk`, or a join table's pair.
    var keys: [String]
    /// The owner's table, whose keys the numbering batches walk.
    var ownerTable: String

    var trigger: OnlineTrigger { .named("positions", table: table, column: column) }
    /// `orchestrator_online_owners_<digest>`: the owners whose links to number again.
    var log: String { OnlineTrigger.prefix + "owners_" + OnlineTrigger.digest(table + "." + column) }

    /// The phases, then the statements of the switch-over.
    func form(in schema: String) -> (phases: [OnlinePhase], atSwitchOver: [PlannedStatement]) {
        let unchanged = SQL.joined([owner, orderBy].map { "OLD.\(ident: $0) IS NOT DISTINCT FROM NEW.\(ident: $0)" }, separator: " AND ")
        let body: SQL = """
            BEGIN
                IF TG_OP = 'UPDATE' AND \(unchanged) THEN
                    RETURN NEW;
                END IF;
                IF TG_OP <> 'INSERT' AND OLD.\(ident: owner) IS NOT NULL THEN
                    INSERT INTO \(ident: schema, log) (\(ident: "owner_pk")) VALUES (OLD.\(ident: owner));
                END IF;
                IF TG_OP = 'DELETE' THEN
                    RETURN OLD;
                END IF;
                IF NEW.\(ident: owner) IS NULL THEN
                    NEW.\(ident: column) := NULL;
                ELSE
                    INSERT INTO \(ident: schema, log) (\(ident: "owner_pk")) VALUES (NEW.\(ident: owner));
                END IF;
                RETURN NEW;
            END
            """
        let createLog = PlannedStatement(
            "CREATE TABLE IF NOT EXISTS \(ident: schema, log) (\(ident: "_pk") bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \(ident: "owner_pk") bigint NOT NULL)",
            lock: .none, summary: "log table \(log): owners of \(table) whose links to number again"
        )
        var install = OnlinePhase.instant(
            [createLog] + trigger.installStatements(in: schema, timing: "BEFORE INSERT OR UPDATE OR DELETE", body: body, summary: "logs the owners of links written to \(table)"),
            summary: "trigger on \(table): the owners of links written are logged, to number \(column) again"
        )
        install.installs = [trigger]
        var owners = BatchedStatement(schema: schema, table: ownerTable, prefix: number(in: schema, where: "\(ident: owner) IS NOT NULL"), key: "\(ident: owner)", suffix: matched)
        owners.keyAgain = "x.\(ident: owner)"
        let numbering = OnlinePhase.batched(
            owners,
            summary: "number \(table).\(column) by \(orderBy) within each \(owner), in batches of \(ownerTable) keys"
        )
        let drain = OnlinePhase.batched(
            BatchedStatement(schema: schema, table: log, prefix: "WITH taken AS (DELETE FROM \(ident: schema, log) WHERE \(ident: "owner_pk") IS NOT NULL", suffix: " RETURNING \(ident: "owner_pk")) \(renumberTaken(in: schema))"),
            summary: "number \(table).\(column) again for the owners logged, in batches of the log"
        )
        let switchOver = [
            PlannedStatement(
                "WITH taken AS (DELETE FROM \(ident: schema, log) RETURNING \(ident: "owner_pk")) \(renumberTaken(in: schema))",
                lock: .rowExclusive, summary: "number \(table).\(column) again for the owners logged last"
            ),
            PlannedStatement("DROP TABLE IF EXISTS \(ident: schema, log)", lock: .accessExclusive, summary: "drop log table \(log)"),
        ]
        return ([install, numbering, drain, drain], switchOver)
    }

    /// `UPDATE` of the positions of the links chosen by `condition`, each owner's numbered
    /// whole; ends in the subquery's `WHERE`, for a range or `matched` to follow.
    private func number(in schema: String, where condition: SQL) -> SQL {
        """
        UPDATE \(ident: schema, table) AS x SET \(ident: column) = o.position \
        FROM (SELECT \(idents: keys), (row_number() OVER (PARTITION BY \(ident: owner) ORDER BY \(ident: orderBy)) - 1)::integer AS position \
        FROM \(ident: schema, table) WHERE \(condition)
        """
    }

    /// Closes `number`: only rows whose position changes are written.
    private var matched: SQL {
        var sql: SQL = ") AS o WHERE "
        sql.append(SQL.joined(keys.map { "x.\(ident: $0) = o.\(ident: $0)" }, separator: " AND "))
        sql.append(" AND x.\(ident: column) IS DISTINCT FROM o.position")
        return sql
    }

    /// The owners taken out of the log (the CTE `taken`) numbered again. The rows updated are
    /// restricted to those owners too, as a range batch's are (`keyAgain`): with the owners only
    /// inside the subquery, PostgreSQL joined its rows back to a sequential scan of the whole
    /// links' table once it expected a few thousand owners (EXPLAIN on 3M links, 5,000 owners
    /// logged: Seq Scan of the target, 3.7 s; restricted, both sides through the owner index:
    /// 1.5 s), in every drain batch and in the switch-over, under its lock.
    private func renumberTaken(in schema: String) -> SQL {
        let logged: SQL = "\(ident: owner) IN (SELECT \(ident: "owner_pk") FROM taken)"
        return "\(number(in: schema, where: logged))\(matched) AND x.\(logged)"
    }
}
