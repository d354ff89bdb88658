import SQLBuilding

/// The touched-row log of `OnlineStageThree`, `<staging>._touched_rows (table_name, pk)`, and
/// the checks reading it. A row of a new table is touched when it is written after the build
/// (its own key, before and after the write) or when a link to it is (the keys a foreign key
/// column holds before and after the write, under the referenced table's name; a join table's
/// rows, which have no key, log only those). So the log names every row whose own columns,
/// whose links or whose count of linked rows may have changed since the build proved them,
/// and a link moving between owners names both.
struct TouchedRows {
    var staging: String

    func install(on tables: [TableLayout]) -> [PlannedStatement] {
        let log = OnlineStageThree.touchedTable
        var statements = [
            PlannedStatement("""
                CREATE TABLE \(ident: staging, log) (table_name text NOT NULL, pk bigint NOT NULL, PRIMARY KEY (table_name, pk))
                """, lock: .accessExclusive, summary: "create the log of the new rows written after stage 3's build"),
            // The trigger's arguments: pairs of a foreign key column and the table it references.
            PlannedStatement("""
                CREATE FUNCTION \(ident: staging, OnlineStageThree.function)() RETURNS trigger LANGUAGE plpgsql
                SET search_path TO \(ident: staging), pg_catalog, pg_temp AS $body$
                DECLARE
                    written jsonb;
                    link integer;
                BEGIN
                    FOREACH written IN ARRAY CASE TG_OP
                        WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)] WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)] ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END
                    LOOP
                        IF written ? '_pk' THEN
                            INSERT INTO \(ident: log) (table_name, pk) VALUES (TG_TABLE_NAME, (written ->> '_pk')::bigint) ON CONFLICT DO NOTHING;
                        END IF;
                        FOR link IN 0 .. TG_NARGS / 2 - 1 LOOP
                            IF written ->> TG_ARGV[2 * link] IS NOT NULL THEN
                                INSERT INTO \(ident: log) (table_name, pk) VALUES (TG_ARGV[2 * link + 1], (written ->> TG_ARGV[2 * link])::bigint)
                                ON CONFLICT DO NOTHING;
                            END IF;
                        END LOOP;
                    END LOOP;
                    RETURN NULL;
                END
                $body$
                """, lock: .none, summary: "create the function logging the keys of each new row written and of the rows it links"),
        ]
        for table in tables {
            let links = table.foreignKeys.flatMap { [$0.column, $0.referencedTable] }
            statements.append(PlannedStatement("""
                CREATE TRIGGER \(ident: OnlineStageThree.trigger) AFTER INSERT OR UPDATE OR DELETE ON \(ident: staging, table.name) \
                FOR EACH ROW EXECUTE FUNCTION \(ident: staging, OnlineStageThree.function)(\(literals: links))
                """, lock: .shareRowExclusive, summary: "log the keys of \(staging).\(table.name) rows written after the build, and of the rows they link"))
            statements.append(PlannedStatement(
                "ALTER TABLE \(ident: staging, table.name) ENABLE ALWAYS TRIGGER \(ident: OnlineStageThree.trigger)",
                lock: .shareRowExclusive, summary: "the log records the rounds' writes too, which run as a replica"
            ))
        }
        return statements
    }

    /// The rows breaking `foreignKey`: those whose column names a logged key of the referenced
    /// table that no row has. A row written since the build logged the key it links to, and a
    /// referenced row deleted since logged its own; every other link the build proved.
    func recheck(_ foreignKey: ForeignKey, of table: TableLayout) -> PlannedStatement {
        let referenced = foreignKey.referencedTable
        let key: SQL = table.kind.isHierarchy ? "x._pk" : "x.\(ident: foreignKey.column) AS _pk"
        let rows: SQL = """
            SELECT \(key) FROM \(ident: staging, table.name) AS x WHERE x.\(ident: foreignKey.column) IN (
                SELECT t.pk FROM \(ident: staging, OnlineStageThree.touchedTable) AS t
                WHERE t.table_name = \(literal: referenced) AND NOT EXISTS (SELECT 1 FROM \(ident: staging, referenced) AS p WHERE p._pk = t.pk)
            )
            """
        var statement = DataCheck.raising(
            rows: rows,
            problem: "rows of \(table.name) whose \(foreignKey.column) names no row of \(foreignKey.referencedTable) (foreign key \(foreignKey.name))",
            hint: "a row written during the migration left a link behind; the old store is unchanged, run apply again",
            errorCode: "foreign_key_violation"
        )
        statement.summary = "stage 3: foreign key \(foreignKey.name) for the rows written after the build"
        return statement
    }

    /// The keys of `table` the log names.
    func logged(_ table: String) -> SQL {
        "(SELECT pk FROM \(ident: staging, OnlineStageThree.touchedTable) WHERE table_name = \(literal: table))"
    }
}
