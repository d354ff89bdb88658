import SQLBuilding

/// The source keys a catch-up round maps again, per source table: the rows of
/// `<staging>._catch_up_keys` the engine fills from the row change log before each round.
struct CatchUpKeys {
    var staging: String

    /// `(SELECT pk FROM <staging>._catch_up_keys WHERE table_name = '<table>')`.
    func of(_ table: String) -> SQL {
        "(SELECT pk FROM \(ident: staging, OnlineCatchUp.keysTable) WHERE table_name = \(literal: table))"
    }

    /// `(SELECT pk FROM <staging>._catch_up_owners WHERE link = '<link>')`: the destination keys
    /// of the owners whose ordered links `link` the round numbers again.
    func owners(of link: String) -> SQL {
        "(SELECT pk FROM \(ident: staging, OnlineCatchUp.ownersTable) WHERE link = \(literal: link))"
    }
}

/// What `apply --online` adds to a heavyweight step (docs/online-migrations.md): the old store
/// stays writable through the bulk passes, row-level triggers log the key of every row written
/// meanwhile, and catch-up rounds map those rows again until few are left; the last round,
/// stage 3 and the swap then run under the write guard.
///
/// A round: the destination rows made from the logged source rows are deleted (their
/// association rows kept while the source row is there and passes the filter, so every
/// destination key stays what other rows link to), then stage 1 and stage 2 run again
/// restricted to those keys, in the step's order. Stage 3 has not run yet, so no foreign key
/// or unique constraint is in the way.
public struct OnlineCatchUp: Sendable, Hashable {
    public static let changesTable = "_row_changes"
    public static let keysTable = "_catch_up_keys"
    public static let positionTable = "_catch_up_position"
    public static let function = "_record_row_change"
    public static let trigger = "_orchestrator_row"
    /// On a table holding a one-to-one read from the other side (`CatchUpPointedRows`).
    public static let pointedTrigger = "_orchestrator_pointed_row"
    public static let ownersTable = "_catch_up_owners"
    public static let policyInstancesTable = "_policy_instances"

    public var staging: String
    /// With `ChangeTracking.install`, in its transaction: the log, the keys and position
    /// tables, the function and a row trigger on every table of the old store.
    public var install: [PlannedStatement]
    /// One catch-up round, in order: set-based statements and streamed entity mappings, each
    /// restricted to the round's keys.
    public var round: [CatchUpStep]
    /// Under the write guard, before the swap: the key sequences of tables keeping their source
    /// keys, after the rows written meanwhile.
    public var keySequences: [PlannedStatement]

    /// Tables of the new store keeping their source rows' keys, with each one's source table:
    /// while the application writes, a policy's instances there take their keys from the
    /// source table's sequence, as the application's rows do.
    public var keptKeys: [String: String]
    /// Join tables of the old store, whose triggers log the keys of the two rows each link joins.
    public var loggedJoinTables: [String]
    /// Columns of the old store, as `table.column`, keeping a one-to-one that entity mappings
    /// read from the other side: `pointedTrigger` logs the key each held before it changed or
    /// its row went (`CatchUpPointedRows`).
    public var loggedPointers: [String] = []
    /// Join tables of the new store whose pairs of the round's rows a round makes again.
    public var relinkedJoinTables: [String]
    /// Entity mappings whose policy runs again whole in the last round, under the write guard,
    /// not per round (`WholeMappingRerun`); their rows wait for it.
    public var rerunWhole: [String] = []
    /// The last round, under the write guard: `round`, with the entity mappings of
    /// `rerunWhole` run whole.
    public var guardedRound: [CatchUpStep]
    /// Under the write guard, after the last round's keys are taken: every source row the
    /// entity mappings of `rerunWhole` read, into the round's keys.
    public var wholeKeys: [PlannedStatement] = []

    /// A statement of the round, a streamed entity mapping restricted to the round's keys, or
    /// a policy's stage 2 hook for the rows made from the source rows `sourceKeys` selects.
    public enum CatchUpStep: Sendable, Hashable {
        case statement(PlannedStatement)
        case stream(StreamedMapping)
        case createRelationships(entityMapping: String, sourceKeys: SQL)
    }

    init(
        store: String, staging: String, sourceTables: [TableLayout], round: [CatchUpStep], keySequences: [PlannedStatement],
        keptKeys: [String: String], relinkedJoinTables: [String]
    ) {
        self.staging = staging
        self.loggedJoinTables = sourceTables.filter { !$0.kind.isHierarchy }.map(\.name)
        self.relinkedJoinTables = relinkedJoinTables
        self.round = round
        self.guardedRound = round
        self.keySequences = keySequences
        self.keptKeys = keptKeys
        var install = [
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.changesTable) (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    table_name text NOT NULL,
                    pk bigint NOT NULL,
                    operation text NOT NULL
                )
                """, lock: .accessExclusive, summary: "create the row change log of \(store)"),
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.keysTable) (table_name text NOT NULL, pk bigint NOT NULL, PRIMARY KEY (table_name, pk))
                """, lock: .accessExclusive, summary: "create the table of the keys a catch-up round maps again"),
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.positionTable) (mapped_through bigint PRIMARY KEY)
                """, lock: .accessExclusive, summary: "create the position in the row change log the catch-up rounds reached"),
            PlannedStatement("INSERT INTO \(ident: staging, Self.positionTable) VALUES (0)", lock: .rowExclusive, summary: "no change mapped again yet"),
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.ownersTable) (link text NOT NULL, pk bigint NOT NULL, PRIMARY KEY (link, pk))
                """, lock: .accessExclusive, summary: "create the table of the owners whose ordered links a catch-up round numbers again"),
            // source_pk NULL: inserted by a hook over the whole entity mapping.
            PlannedStatement("""
                CREATE TABLE \(ident: staging, Self.policyInstancesTable) (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    entity_mapping text NOT NULL,
                    source_pk bigint,
                    destination_table text NOT NULL,
                    destination_pk bigint NOT NULL
                )
                """, lock: .accessExclusive, summary: "create the table of the instances policies inserted for each source row"),
            // As `ChangeTracking`'s function: SECURITY DEFINER, names resolved in the staging
            // schema. A join table's row has no key: its trigger passes the tables and columns
            // of the two rows it links (owner, then target), and both keys are logged.
            // `pointedTrigger` passes pairs of a referenced table and a column: the key the
            // column held before is logged when it changes or the row goes.
            PlannedStatement("""
                CREATE FUNCTION \(ident: staging, Self.function)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path TO \(ident: staging), pg_catalog, pg_temp AS $body$
                DECLARE
                    pointed bigint;
                BEGIN
                    \(CatchUpTruncates.branch)
                    IF TG_NAME = \(literal: Self.pointedTrigger) THEN
                        FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
                            pointed := (to_jsonb(OLD) ->> TG_ARGV[2 * i + 1])::bigint;
                            IF pointed IS NOT NULL AND (TG_OP = 'DELETE' OR pointed IS DISTINCT FROM (to_jsonb(NEW) ->> TG_ARGV[2 * i + 1])::bigint) THEN
                                INSERT INTO _row_changes (table_name, pk, operation) VALUES (TG_ARGV[2 * i], pointed, TG_OP);
                            END IF;
                        END LOOP;
                    ELSIF TG_NARGS = 0 THEN
                        IF TG_OP <> 'INSERT' THEN
                            INSERT INTO _row_changes (table_name, pk, operation) VALUES (TG_TABLE_NAME, OLD._pk, TG_OP);
                        END IF;
                        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW._pk <> OLD._pk) THEN
                            INSERT INTO _row_changes (table_name, pk, operation) VALUES (TG_TABLE_NAME, NEW._pk, TG_OP);
                        END IF;
                    ELSE
                        IF TG_OP <> 'INSERT' THEN
                            INSERT INTO _row_changes (table_name, pk, operation)
                            VALUES (TG_ARGV[0], (to_jsonb(OLD) ->> TG_ARGV[1])::bigint, TG_OP), (TG_ARGV[2], (to_jsonb(OLD) ->> TG_ARGV[3])::bigint, TG_OP);
                        END IF;
                        IF TG_OP <> 'DELETE' THEN
                            INSERT INTO _row_changes (table_name, pk, operation)
                            VALUES (TG_ARGV[0], (to_jsonb(NEW) ->> TG_ARGV[1])::bigint, TG_OP), (TG_ARGV[2], (to_jsonb(NEW) ->> TG_ARGV[3])::bigint, TG_OP);
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $body$
                """, lock: .none, summary: "create the function logging the key of each row written to \(store)"),
        ]
        for table in sourceTables {
            install.append(CatchUpTruncates.install(CatchUpTruncates.trigger, table: table.name, store: store, staging: staging, arguments: Self.linkedRows(of: table)))
            install.append(PlannedStatement("""
                CREATE TRIGGER \(ident: Self.trigger) AFTER INSERT OR UPDATE OR DELETE ON \(ident: store, table.name) FOR EACH ROW EXECUTE FUNCTION \(ident: staging, Self.function)(\(Self.linkedRows(of: table)))
                """, lock: .shareRowExclusive, summary: "log the keys of rows written to \(store).\(table.name)\(table.kind.isHierarchy ? "" : ", as the keys of the rows each link joins,") until the swap"))
        }
        self.install = install
    }

    /// A join table's trigger arguments: the owner's table and column, the target's table and
    /// column; nothing for a hierarchy table.
    static func linkedRows(of table: TableLayout) -> SQL {
        guard !table.kind.isHierarchy else { return "" }
        let ends = [ColumnLayout.Role.joinOwner, .joinTarget].compactMap { role -> [String]? in
            guard let column = table.columns.first(where: { $0.role == role }),
                  let key = table.foreignKeys.first(where: { $0.column == column.name }) else { return nil }
            return [key.referencedTable, column.name]
        }
        precondition(ends.count == 2, "a join table has an owner and a target column, each with its foreign key")
        return "\(literals: ends.flatMap { $0 })"
    }

    /// The keys of `sourceTable` a round maps again, as a subquery.
    public func keys(of sourceTable: String) -> SQL { CatchUpKeys(staging: staging).of(sourceTable) }

    /// Whether the row change log is there (an earlier run was online too).
    public var isInstalled: SQL {
        "SELECT to_regclass(\(quoteIdentifier(staging) + "." + quoteIdentifier(Self.changesTable))) IS NOT NULL AS present"
    }

    /// Writes logged and not mapped again yet: `pending`, and the last id `upto`.
    public var pending: SQL {
        """
        SELECT count(*) AS pending, coalesce(max(c.id), 0) AS upto FROM \(ident: staging, Self.changesTable) AS c
        """
    }

    /// Before a round: the distinct keys logged up to change `upto`, taken out of the log. Ids
    /// are drawn when a write happens and seen when it commits, so a write committing after
    /// this round drew a lower id: it stays in the log for the next round (a position in the
    /// log would pass over it).
    public func collectKeys(upTo upto: Int) -> [SQL] {
        [
            "TRUNCATE \(ident: staging, Self.keysTable)",
            """
            WITH mapped AS (DELETE FROM \(ident: staging, Self.changesTable) WHERE id <= \(upto) RETURNING table_name, pk)
            INSERT INTO \(ident: staging, Self.keysTable) (table_name, pk) SELECT DISTINCT table_name, pk FROM mapped
            """,
            "UPDATE \(ident: staging, Self.positionTable) SET mapped_through = greatest(mapped_through, \(upto))",
        ]
    }

    /// After the swap, in its transaction (the staging schema is `store` now): the function
    /// goes to the old store with its triggers, the tables go.
    public static func afterSwap(store: String, old: String) -> [SQL] {
        [
            "ALTER FUNCTION \(ident: store, function)() SET SCHEMA \(ident: old)",
            "DROP TABLE \(ident: store, changesTable), \(ident: store, keysTable), \(ident: store, positionTable), \(ident: store, ownersTable), \(ident: store, policyInstancesTable)",
        ]
    }

    /// Drops the row triggers with their function from the old store (or a leftover schema).
    public static func remove(from old: String) -> SQL {
        "DROP FUNCTION IF EXISTS \(ident: old, function)() CASCADE"
    }
}
