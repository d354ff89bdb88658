import SQLBuilding

/// A foreign key whose delete rule the step changes (`AddForeignKey.replacing`): the
/// application, on the old version until the switch-over, deletes rows under the old rule. The
/// new key comes in the middle of the step (added `NOT VALID`, then validated, while writes go
/// on), so an `AFTER DELETE` trigger on the referenced table (`ORCHESTRATOR_ONLINE_rule_<digest>`)
/// acts as the old key did: SET NULL clears the links to the row deleted, CASCADE deletes the
/// linking rows, a denying key (RESTRICT, NO ACTION) raises `foreign_key_violation` as
/// PostgreSQL does. Its name sorts before the new key's action trigger (`OnlineTrigger.firstPrefix`),
/// so the new key then finds no link left to act on. `AFTER`, as a key's action is: a `BEFORE`
/// trigger deleting the rows linking to a row not yet deleted looped on a cycle of links
/// (a folder its child's parent) until the stack ran out. The step's own deletes
/// (`ClearedLinks.ownWrite`) run no rule, as offline. The switch-over drops the trigger.
struct ReplacedKeyRule {
    var key: AddForeignKey
    var old: ForeignKey

    var trigger: OnlineTrigger {
        OnlineTrigger(table: key.foreignKey.referencedTable, name: OnlineTrigger.firstPrefix + "rule_" + OnlineTrigger.digest(key.table + "." + key.foreignKey.column))
    }

    var summary: String {
        "trigger on \(key.foreignKey.referencedTable): a row deleted acts on \(key.table).\(key.foreignKey.column) as \(old.name) does (\(old.onDelete)), until the switch-over"
    }

    func installStatements(in schema: String) -> [PlannedStatement] {
        trigger.installStatements(
            in: schema, timing: "AFTER DELETE", body: body(in: schema),
            summary: "a row of \(key.foreignKey.referencedTable) deleted acts on \(key.table).\(key.foreignKey.column) as \(old.name) does (\(old.onDelete))"
        )
    }

    private func body(in schema: String) -> SQL {
        let (table, column) = (key.table, key.foreignKey.column)
        let linking: SQL = "\(ident: schema, table) WHERE \(ident: column) = OLD.\(ident: "_pk")"
        let action: SQL
        switch old.onDelete.uppercased() {
        case "CASCADE":
            action = "DELETE FROM \(linking);"
        case "RESTRICT", "NO ACTION":
            let message = "update or delete on table \"\(key.foreignKey.referencedTable)\" violates foreign key constraint \"\(old.name)\" on table \"\(table)\""
            action = """
                IF EXISTS (SELECT 1 FROM \(linking)) THEN
                            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = \(literal: message),
                                DETAIL = format(\(literal: "Key (_pk)=(%s) is still referenced from table \"\(table)\"."), OLD.\(ident: "_pk"));
                        END IF;
                """
        default:
            action = "UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: column) = OLD.\(ident: "_pk");"
        }
        return """
            BEGIN
                IF current_setting('orchestrator.online_step', true) IS DISTINCT FROM 'on' THEN
                    \(action)
                END IF;
                RETURN NULL;
            END
            """
    }
}
