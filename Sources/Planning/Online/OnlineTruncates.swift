import SQLBuilding

// A `TRUNCATE` of a table the step mirrors out of, under `apply --online`, fires none of its
// row triggers: the copies made so far (the moved rows in their new table, the rows that stay
// in the shadow, links in a new join table or column) would survive the rows they came from.
// So each trigger mirroring rows elsewhere comes with a statement trigger on the same table,
// `AFTER TRUNCATE … FOR EACH STATEMENT`, that clears what the mirror wrote from that table:
// 1. it runs at the end of the `TRUNCATE`, which holds ACCESS EXCLUSIVE on the table (no batch
//    reads it meanwhile, and later batches find it empty), before the rest of the
//    application's transaction, whose writes the row triggers mirror again;
// 2. in a READ COMMITTED transaction its statement sees every copy committed before, the
//    batches' included; in REPEATABLE READ or SERIALIZABLE it could miss the copies committed
//    after the transaction's snapshot, so there it refuses the `TRUNCATE` (SQLSTATE 55000,
//    naming the table) rather than leave them.
// Triggers that rewrite the written row itself (backfills, renames, conversions) need nothing:
// a truncated row is gone with what they wrote. The switch-over drops these triggers with the
// others, and a resumed run reinstalls them with the phase that installed them.

/// What a truncate of a mirrored table clears: the statement and what it names, for summaries.
struct TruncateFollowing {
    var clearing: SQL
    var cleared: String
}

extension OnlineTrigger {
    /// The statement trigger following a `TRUNCATE` of the table this row trigger mirrors.
    var truncateFollower: OnlineTrigger {
        OnlineTrigger(table: table, name: Self.prefix + "truncate_" + Self.digest(name))
    }

    /// The function and the `AFTER TRUNCATE` statement trigger calling it, replacing any an
    /// interrupted run left.
    func truncateStatements(in schema: String, following: TruncateFollowing) -> [PlannedStatement] {
        let body: SQL = """
            BEGIN
                IF current_setting('transaction_isolation') <> 'read committed' THEN
                    RAISE EXCEPTION USING ERRCODE = '55000',
                        MESSAGE = format('TRUNCATE of %I.%I while apply --online runs a step on it: only in a READ COMMITTED transaction', TG_TABLE_SCHEMA, TG_TABLE_NAME),
                        HINT = 'the step clears what it copied from the table; a snapshot taken before could miss copies committed since';
                END IF;
                \(following.clearing);
                RETURN NULL;
            END
            """
        let summary = "a TRUNCATE of \(table) clears \(following.cleared)"
        return [
            PlannedStatement(
                "CREATE OR REPLACE FUNCTION \(ident: schema, name)() RETURNS trigger LANGUAGE plpgsql AS \(SQL.dollarQuoted(body, tag: "online"))",
                lock: .none, summary: "function \(name): \(summary)"
            ),
            PlannedStatement("DROP TRIGGER IF EXISTS \(ident: name) ON \(ident: schema, table)", lock: .accessExclusive, summary: "drop trigger \(name) on \(table) if left"),
            PlannedStatement(
                "CREATE TRIGGER \(ident: name) AFTER TRUNCATE ON \(ident: schema, table) FOR EACH STATEMENT EXECUTE FUNCTION \(ident: schema, name)()",
                lock: .shareRowExclusive, summary: "trigger \(name) on \(table): \(summary)"
            ),
        ]
    }
}

extension OnlinePhase {
    /// Adds to this install phase (of `trigger`, first among its installs) the statement
    /// trigger following a `TRUNCATE`.
    mutating func following(truncate following: TruncateFollowing, of trigger: OnlineTrigger, in schema: String) {
        let follower = trigger.truncateFollower
        // After the row trigger's function, before its trigger: the first and last statements
        // stay the row trigger's.
        statements.insert(contentsOf: follower.truncateStatements(in: schema, following: following), at: min(1, statements.count))
        lock = max(lock, statements.map(\.lock).max() ?? lock)
        summary += "; a TRUNCATE of \(trigger.table) clears \(following.cleared)"
        installs.append(follower)
    }
}

extension ShadowTable {
    /// In the shadow's trigger, for a row the application turns into one of a moved entity
    /// after the batches cleared the links to moved rows: the links other rows hold to it are
    /// cleared at once (a join table's deleted; in the table's own key, those of the rows that
    /// stay), as the offline step treats the links to moved rows (`MovedLinks`, and the
    /// shadow's `referencingPhases`), before the row leaves the shadow: the key pointing at the
    /// shadow then finds nothing to act on (no cascade, no denial), and before it exists its
    /// validation finds no link to a row the shadow lacks.
    func linksToRowsTurnedMoved(in schema: String) -> SQL {
        guard !referencing.isEmpty else { return "" }
        var sql: SQL = "IF TG_OP = 'UPDATE' AND NEW.\(ident: "_entity") IN (\(literals: moved)) THEN"
        for (referencing, key) in referencing {
            let linking: SQL = "\(ident: key.column) = OLD.\(ident: "_pk")"
            if !referencing.kind.isHierarchy {
                sql.append(" DELETE FROM \(ident: schema, referencing.name) WHERE \(linking);")
            } else if referencing.name == table.name {
                sql.append(" UPDATE \(ident: schema, referencing.name) SET \(ident: key.column) = NULL WHERE \(linking) AND \(ident: "_entity") NOT IN (\(literals: moved));")
            } else {
                sql.append(" UPDATE \(ident: schema, referencing.name) SET \(ident: key.column) = NULL WHERE \(linking);")
            }
        }
        sql.append(" END IF;")
        return sql
    }
}
