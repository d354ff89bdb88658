import SQLBuilding

/// A `TRUNCATE` of a table of the old store, while a heavyweight step runs online, fires none
/// of the row triggers logging written keys: the rows it removes would stay in the new store.
/// So each table also gets a statement trigger `BEFORE TRUNCATE`, calling the same function
/// with the same arguments, which logs what a `DELETE` of every row would log: each row's
/// `_pk` (a join table: both keys of each link; a table holding a one-to-one read from the
/// other side: the key each such column holds). The rounds then map those keys again, find
/// the rows gone and delete what was made from them, as for any delete.
/// 1. it runs once the `TRUNCATE` holds ACCESS EXCLUSIVE on the table, so it reads every row
///    committed (no write or pass reads the table meanwhile), before they go;
/// 2. in a READ COMMITTED transaction its read sees them all; a REPEATABLE READ or
///    SERIALIZABLE snapshot could miss a row committed since whose logged key a round already
///    took, so there it refuses the `TRUNCATE` (SQLSTATE 55000, naming the table).
/// The triggers go with the function (the swap, `--restart`), as the row triggers do.
public enum CatchUpTruncates {
    public static let trigger = "_orchestrator_row_truncate"
    public static let pointedTrigger = "_orchestrator_pointed_truncate"

    /// First in `OnlineCatchUp.function`'s body: what its statement triggers run.
    static var branch: SQL {
        """
        IF TG_OP = 'TRUNCATE' THEN
                IF current_setting('transaction_isolation') <> 'read committed' THEN
                    RAISE EXCEPTION USING ERRCODE = '55000',
                        MESSAGE = format('TRUNCATE of %I.%I while apply --online runs a heavyweight step on it: only in a READ COMMITTED transaction', TG_TABLE_SCHEMA, TG_TABLE_NAME),
                        HINT = 'the step logs the rows it removes; a snapshot taken before could miss rows committed since';
                END IF;
                IF TG_NAME = \(literal: pointedTrigger) THEN
                    FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
                        EXECUTE format('INSERT INTO _row_changes (table_name, pk, operation) SELECT %L, %I, %L FROM %I.%I WHERE %I IS NOT NULL',
                            TG_ARGV[2 * i], TG_ARGV[2 * i + 1], TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[2 * i + 1]);
                    END LOOP;
                ELSIF TG_NARGS = 0 THEN
                    EXECUTE format('INSERT INTO _row_changes (table_name, pk, operation) SELECT %L, _pk, %L FROM %I.%I', TG_TABLE_NAME, TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME);
                ELSE
                    FOR i IN 0 .. 1 LOOP
                        EXECUTE format('INSERT INTO _row_changes (table_name, pk, operation) SELECT %L, %I, %L FROM %I.%I WHERE %I IS NOT NULL',
                            TG_ARGV[2 * i], TG_ARGV[2 * i + 1], TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[2 * i + 1]);
                    END LOOP;
                END IF;
                RETURN NULL;
            END IF;
        """
    }

    /// The statement trigger beside a row trigger `name` on `table`, with its arguments.
    static func install(_ name: String, table: String, store: String, staging: String, arguments: SQL) -> PlannedStatement {
        PlannedStatement("""
            CREATE TRIGGER \(ident: name) BEFORE TRUNCATE ON \(ident: store, table) FOR EACH STATEMENT EXECUTE FUNCTION \(ident: staging, OnlineCatchUp.function)(\(arguments))
            """, lock: .shareRowExclusive, summary: "log the keys of the rows a TRUNCATE of \(store).\(table) removes, until the swap")
    }
}
