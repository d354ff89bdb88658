import SQLBuilding

/// Links that `apply --online` clears early (`DetachReferences`' online form: links to rows of
/// a removed entity, or of an entity moved out of its table) keep their foreign key's delete
/// rule until the switch-over. The application, still on the old version, may delete a row it
/// links to meanwhile: in its semantics a CASCADE key deletes the linking rows and a denying
/// key (RESTRICT, NO ACTION) refuses the delete, as offline on the final data; a SET NULL key
/// clears the link, which is cleared already, so it needs none of this. So:
/// 1. a log table `orchestrator_online_cleared_<digest> (_pk, linked_pk)` holds, for every
///    link the step cleared, the linking row and the row it linked to: the batches log what
///    they clear, the clearing trigger what it clears (locking the linked row `FOR KEY SHARE`,
///    as the key's check would, so its delete waits for the write);
/// 2. a `BEFORE UPDATE OF <column> OR DELETE` trigger on the linking table
///    (`orchestrator_online_changed_<digest>`, firing before the clearing trigger by name)
///    forgets the logged link of a row the application deletes or whose link it writes;
/// 3. an `AFTER DELETE` trigger on the linked table (`orchestrator_online_replay_<digest>`)
///    acts as the key on the logged links to a deleted row: CASCADE deletes the linking rows,
///    a denying key raises `foreign_key_violation` as PostgreSQL does. The step's own deletes
///    of removed rows (`ownWrite`) only forget their links;
/// 4. the switch-over drops the triggers, then the log.
struct ClearedLinks {
    enum Rule {
        case cascade
        case deny
    }

    var detach: DetachReferences
    var key: ForeignKey
    var rule: Rule

    /// Nil for a key whose delete rule gives what the early clearing gives (SET NULL).
    init?(_ detach: DetachReferences) {
        guard let key = detach.key else { return nil }
        switch key.onDelete.uppercased() {
        case "CASCADE": rule = .cascade
        case "RESTRICT", "NO ACTION": rule = .deny
        default: return nil
        }
        self.detach = detach
        self.key = key
    }

    /// Set by the step's batches that delete rows of removed entities: the delete rule does
    /// not act on them (a migration runs none), the logged links to them are forgotten.
    static let ownWrite: SQL = "SET LOCAL orchestrator.online_step = 'on'"

    private var digest: String { OnlineTrigger.digest(detach.table + "." + detach.column) }
    var log: String { OnlineTrigger.prefix + "cleared_" + digest }
    var changed: OnlineTrigger { OnlineTrigger(table: detach.table, name: OnlineTrigger.prefix + "changed_" + digest) }
    var replay: OnlineTrigger { OnlineTrigger(table: detach.referencedTable, name: OnlineTrigger.prefix + "replay_" + digest, log: log) }

    /// The log and the three triggers in one short transaction, then the logging batches.
    func phases(clearing trigger: OnlineTrigger, in schema: String, clear: PlannedStatement) -> [OnlinePhase] {
        let (table, column) = (detach.table, detach.column)
        let does = "links written to rows of \(detach.entities.joined(separator: ", ")) (\(detach.why)) are cleared and logged"
        let createLog: [PlannedStatement] = [
            PlannedStatement(
                "CREATE TABLE IF NOT EXISTS \(ident: schema, log) (\(ident: "_pk") bigint PRIMARY KEY, \(ident: "linked_pk") bigint NOT NULL)",
                lock: .none, summary: "log table \(log): links of \(table).\(column) cleared, with the rows they linked to"
            ),
            PlannedStatement(
                "CREATE INDEX IF NOT EXISTS \(ident: log + "_linked") ON \(ident: schema, log) (\(ident: "linked_pk"))",
                lock: .share, summary: "index of \(log) by linked row"
            ),
        ]
        let installs = createLog
            + trigger.installStatements(in: schema, timing: "BEFORE INSERT OR UPDATE", body: clearingBody(in: schema), summary: does)
            + changed.installStatements(
                in: schema, timing: "BEFORE UPDATE OF \(quoteIdentifier(column)) OR DELETE", body: changedBody(in: schema),
                summary: "a link of \(table).\(column) the application writes or deletes is no longer logged"
            )
            + replay.installStatements(
                in: schema, timing: "AFTER DELETE", body: replayBody(in: schema),
                summary: "a row of \(detach.referencedTable) deleted acts on the links logged to it as \(key.name) (\(key.onDelete))"
            )
        var install = OnlinePhase.instant(installs, summary: "triggers on \(table) and \(detach.referencedTable): \(does), their delete rule kept")
        install.installs = [trigger, changed, replay]
        return [install, .batched(batches(in: schema), summary: clear.summary + ", logged, in batches")]
    }

    /// `WITH cleared AS (SELECT … FOR UPDATE), logged AS (INSERT INTO log …) UPDATE …`: the
    /// rows of the range locked, their links logged and cleared.
    private func batches(in schema: String) -> BatchedStatement {
        let (table, column) = (detach.table, detach.column)
        let linked: SQL = """
            \(ident: column) IN (SELECT \(ident: "_pk") FROM \(ident: schema, detach.referencedTable) \
            WHERE \(ident: "_entity") IN (\(literals: detach.entities)))
            """
        var prefix: SQL = "WITH cleared AS (SELECT \(ident: "_pk"), \(ident: column) FROM \(ident: schema, table) AS t WHERE \(linked)"
        if !detach.keeping.isEmpty { prefix.append(" AND \(ident: "_entity") NOT IN (\(literals: detach.keeping))") }
        let suffix: SQL = """
             FOR UPDATE OF t), logged AS (INSERT INTO \(ident: schema, log) (\(ident: "_pk"), \(ident: "linked_pk")) \
            SELECT \(ident: "_pk"), \(ident: column) FROM cleared \
            ON CONFLICT (\(ident: "_pk")) DO UPDATE SET \(ident: "linked_pk") = EXCLUDED.\(ident: "linked_pk")) \
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = NULL FROM cleared WHERE x.\(ident: "_pk") = cleared.\(ident: "_pk")
            """
        return BatchedStatement(schema: schema, table: table, prefix: prefix, suffix: suffix)
    }

    /// 1. A link written to a leaving row is logged, then cleared.
    private func clearingBody(in schema: String) -> SQL {
        let column = detach.column
        var written: SQL = "NEW.\(ident: column) IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.\(ident: column) IS DISTINCT FROM OLD.\(ident: column))"
        if !detach.keeping.isEmpty { written.append(" AND NEW.\(ident: "_entity") NOT IN (\(literals: detach.keeping))") }
        return """
            BEGIN
                IF \(written) THEN
                    PERFORM 1 FROM \(ident: schema, detach.referencedTable)
                    WHERE \(ident: "_pk") = NEW.\(ident: column) AND \(ident: "_entity") IN (\(literals: detach.entities)) FOR KEY SHARE;
                    IF FOUND THEN
                        INSERT INTO \(ident: schema, log) (\(ident: "_pk"), \(ident: "linked_pk")) VALUES (NEW.\(ident: "_pk"), NEW.\(ident: column))
                        ON CONFLICT (\(ident: "_pk")) DO UPDATE SET \(ident: "linked_pk") = EXCLUDED.\(ident: "linked_pk");
                        NEW.\(ident: column) := NULL;
                    END IF;
                END IF;
                RETURN NEW;
            END
            """
    }

    /// 2. A row holds a logged link only while its column is NULL: the batches, which clear a
    /// link there, leave the log alone.
    private func changedBody(in schema: String) -> SQL {
        """
        BEGIN
            IF TG_OP = 'DELETE' OR OLD.\(ident: detach.column) IS NULL THEN
                DELETE FROM \(ident: schema, log) WHERE \(ident: "_pk") = OLD.\(ident: "_pk");
            END IF;
            IF TG_OP = 'DELETE' THEN
                RETURN OLD;
            END IF;
            RETURN NEW;
        END
        """
    }

    /// 3. The key's delete rule on the links logged to the row deleted.
    private func replayBody(in schema: String) -> SQL {
        let (table, column) = (detach.table, detach.column)
        let logged: SQL = """
            FROM \(ident: schema, log) l JOIN \(ident: schema, table) r ON r.\(ident: "_pk") = l.\(ident: "_pk") \
            WHERE l.\(ident: "linked_pk") = OLD.\(ident: "_pk") AND r.\(ident: column) IS NULL
            """
        let action: SQL
        switch rule {
        case .cascade:
            action = """
                DELETE FROM \(ident: schema, table) AS d USING \(ident: schema, log) l \
                WHERE l.\(ident: "linked_pk") = OLD.\(ident: "_pk") AND d.\(ident: "_pk") = l.\(ident: "_pk") AND d.\(ident: column) IS NULL;
                """
        case .deny:
            let message = "update or delete on table \"\(detach.referencedTable)\" violates foreign key constraint \"\(key.name)\" on table \"\(table)\""
            action = """
                IF EXISTS (SELECT 1 \(logged)) THEN
                            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = \(literal: message),
                                DETAIL = format(\(literal: "Key (_pk)=(%s) is still referenced from table \"\(table)\"."), OLD.\(ident: "_pk"));
                        END IF;
                """
        }
        return """
            BEGIN
                IF OLD.\(ident: "_entity") IN (\(literals: detach.entities)) THEN
                    IF current_setting('orchestrator.online_step', true) = 'on' THEN
                        DELETE FROM \(ident: schema, log) WHERE \(ident: "linked_pk") = OLD.\(ident: "_pk");
                    ELSE
                        \(action)
                    END IF;
                END IF;
                RETURN NULL;
            END
            """
    }
}
