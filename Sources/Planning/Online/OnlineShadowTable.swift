import SQLBuilding

/// The table an entity's rows move out of, under `apply --online`, rebuilt beside itself with
/// only the rows that stay (pg_repack's shadow table), so that the switch-over neither deletes
/// the moved rows nor checks the rows left: it renames and drops, whatever the table holds.
/// 1. the shadow is created empty, as the destination has the table (columns, identity,
///    primary key, checks, the new `_entity` check included, unique constraints, indexes,
///    foreign keys but its own), indexes and index-backed constraints under temporary names: on no rows,
///    each is a catalog change;
/// 2. a trigger on the old table mirrors every write to the rows that stay into the shadow
///    (an upsert by `_pk`; a row leaving them, deleted or moved to a moved entity, leaves it);
/// 3. batches copy the rows already there, `FOR SHARE ON CONFLICT (_pk) DO NOTHING`, as the
///    move's batches do;
/// 4. the switch-over continues the shadow's identity where the old table's stood, drops the
///    old table (its moved rows are in their new table, the keys that pointed at them there
///    were moved beside it, `ForeignKeyBeside`) and gives the shadow the old table's name, and
///    its primary key, indexes and identity sequence theirs.
/// Runs after every other phase: the old table then has the destination's columns, and the
/// shadow copies them by name.
struct ShadowTable: OnlineChange {
    var kind: ChangeKind { .shadowTable(self) }

    /// The old table as the destination keeps it (its name is the old table's by then).
    var table: TableLayout
    /// The entities whose rows leave it, as the rows name them.
    var moved: [String]
    /// What the offline step does instead.
    var deletes: [DeleteRows]
    /// The foreign keys of the destination that point at it (`OnlineShadowReferences`).
    var referencing: [(table: TableLayout, key: ForeignKey)] = []

    var shadow: String { OnlineTrigger.prefix + "shadow_" + OnlineTrigger.digest(table.name) }

    /// An index of the shadow until it takes `final`.
    func temporaryName(_ final: String) -> String { OnlineTrigger.prefix + "shadowed_" + OnlineTrigger.digest(table.name + "." + final) }

    func statements(in schema: String) -> [PlannedStatement] { deletes.flatMap { $0.statements(in: schema) } }

    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("stay", table: table.name, column: "_entity")
        let moved: SQL = "(\(literals: moved))"
        let columns = table.columns.map(\.name)
        let updates = SQL.joined(columns.filter { $0 != "_pk" }.map { "\(ident: $0) = EXCLUDED.\(ident: $0)" }, separator: ", ")
        let body: SQL = """
            BEGIN
                IF TG_OP <> 'INSERT' AND OLD.\(ident: "_entity") NOT IN \(moved)
                   AND (TG_OP = 'DELETE' OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk") OR NEW.\(ident: "_entity") IN \(moved)) THEN
                    \(linksToRowsTurnedMoved(in: schema))
                    DELETE FROM \(ident: schema, shadow) WHERE \(ident: "_pk") = OLD.\(ident: "_pk");
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.\(ident: "_entity") NOT IN \(moved) THEN
                    INSERT INTO \(ident: schema, shadow) (\(idents: columns)) VALUES (\(SQL.joined(columns.map { "NEW.\(ident: $0)" }, separator: ", ")))
                    ON CONFLICT (\(ident: "_pk")) DO UPDATE SET \(updates);
                END IF;
                RETURN NULL;
            END
            """
        let copy: SQL = """
            INSERT INTO \(ident: schema, shadow) (\(idents: columns)) SELECT \(idents: columns) \
            FROM \(ident: schema, table.name) WHERE \(ident: "_entity") NOT IN \(moved)
            """
        let create = OnlinePhase.instant(creation(in: schema), summary: "create \(shadow), the table \(table.name) becomes, empty: its keys, checks and indexes are catalog changes")
        return .phasesThenAtSwitchOver([create] + OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body,
            does: "writes to rows of \(table.name) that stay are mirrored into \(shadow)",
            batches: BatchedStatement(schema: schema, table: table.name, prefix: copy, suffix: " FOR SHARE ON CONFLICT (\(ident: "_pk")) DO NOTHING").analyzing(shadow),
            summary: "copy the rows of \(table.name) that stay to \(shadow), in batches",
            truncate: TruncateFollowing(clearing: "DELETE FROM \(ident: schema, shadow)", cleared: "the rows copied to \(shadow)")
        ) + referencingPhases(in: schema), referencingSwitchOver(in: schema) + swap(in: schema))
    }

    /// The empty shadow with everything the destination's table has.
    private func creation(in schema: String) -> [PlannedStatement] {
        var empty = table
        empty.name = shadow
        var statements = AddTable(table: empty).statements(in: schema)
        for var unique in table.uniqueConstraints {
            unique.name = temporaryName(unique.name)
            statements += AddUnique(table: shadow, unique: unique, scansRows: false).statements(in: schema)
        }
        for var index in table.indexes {
            index.name = temporaryName(index.name)
            statements += CreateIndex(table: shadow, index: index, scansRows: false).statements(in: schema)
        }
        // The table's own keys point at the shadow, added once it holds every row (`OnlineShadowReferences`).
        for key in table.foreignKeys where key.referencedTable != table.name {
            statements += AddForeignKey(table: shadow, foreignKey: key, scansRows: false).statements(in: schema)
        }
        return statements
    }

    /// The switch-over's part: catalog changes only.
    private func swap(in schema: String) -> [PlannedStatement] {
        let identity = table.columns.first(where: \.isIdentity)?.name ?? "_pk"
        let serial = { (name: String) -> SQL in "pg_get_serial_sequence(\(nameLiteral: schema, name), \(literal: identity))" }
        var statements = [
            PlannedStatement(
                "SELECT setval(\(serial(shadow)), nextval(\(serial(table.name))), false)",
                lock: .accessShare, summary: "\(shadow) continues the identity of \(table.name)"
            ),
            PlannedStatement(
                "DROP TABLE \(ident: schema, table.name)", lock: .accessExclusive,
                summary: "drop the old \(table.name) (its rows that stay are in \(shadow), those of \(moved.joined(separator: ", ")) in their new table)"
            ),
            PlannedStatement("ALTER TABLE \(ident: schema, shadow) RENAME TO \(ident: table.name)", lock: .accessExclusive, summary: "\(shadow) takes the name \(table.name)"),
        ]
        var renames = [(ImplicitNames.primaryKey(table: shadow), ImplicitNames.primaryKey(table: table.name))]
        renames += table.uniqueConstraints.map { (temporaryName($0.name), $0.name) } + table.indexes.map { (temporaryName($0.name), $0.name) }
        for (from, to) in renames {
            statements.append(PlannedStatement("ALTER INDEX \(ident: schema, from) RENAME TO \(ident: to)", lock: .accessExclusive, summary: "index \(from) takes the name \(to)"))
        }
        let sequence = (ImplicitNames.identitySequence(table: shadow, column: identity), ImplicitNames.identitySequence(table: table.name, column: identity))
        statements.append(PlannedStatement(
            "ALTER SEQUENCE \(ident: schema, sequence.0) RENAME TO \(ident: sequence.1)", lock: .accessExclusive, summary: "sequence \(sequence.0) takes the name \(sequence.1)"
        ))
        return statements
    }
}
