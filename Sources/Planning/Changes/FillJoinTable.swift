import SQLBuilding

/// A new join table filled with the links the source kept elsewhere: the to-one column of a
/// relationship made to-many, or a join table owned by the other side before a rename. Order
/// columns take the source's order, or a deterministic one (by `_pk`) where it kept none.
struct FillJoinTable: SchemaChange {
    var kind: ChangeKind { .fillJoinTable(self) }
    enum Side: Sendable, Hashable {
        /// Position of the target among the owner's targets.
        case target
        /// Position of the owner among the target's owners.
        case owner
    }

    var table: String
    var ownerColumn: String
    var targetColumn: String
    var orderColumns: [(column: String, side: Side)]
    /// `a`: the owner side.
    var links: SourceLinks
    /// The table each of the join table's columns references: `apply --online` numbers the
    /// owners of positions the source did not keep by its keys.
    var referencedTables: [String: String] = [:]

    func statements(in schema: String) -> [PlannedStatement] {
        var values: [SQL] = ["\(ident: links.a)", "\(ident: links.b)"]
        for order in orderColumns {
            let (kept, partition, position) = order.side == .target
                ? (links.orderOfB, links.a, links.b)
                : (links.orderOfA, links.b, links.a)
            if let kept {
                values.append("\(ident: kept)")
            } else {
                values.append("(row_number() OVER (PARTITION BY \(ident: partition) ORDER BY \(ident: position)) - 1)::integer")
            }
        }
        var sql: SQL = "INSERT INTO \(ident: schema, table) (\(idents: [ownerColumn, targetColumn] + orderColumns.map(\.column))) SELECT "
        sql.append(SQL.joined(values, separator: ", "))
        sql.append(" FROM \(ident: schema, links.table)")
        var conditions: [SQL] = []
        if let column = links.requiredNotNull { conditions.append("\(ident: column) IS NOT NULL") }
        if let filter = links.ownerFilter {
            conditions.append("\(ident: links.a) IN (SELECT \(ident: "_pk") FROM \(ident: schema, filter.table) WHERE \(ident: "_entity") IN (\(literals: filter.entities)))")
        }
        if !conditions.isEmpty {
            sql.append(" WHERE ")
            sql.append(SQL.joined(conditions, separator: " AND "))
        }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy links from \(links.table) into \(table)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies every link kept in \(links.table) into \(table)")]
    }
}

// Backfills under `apply --online`: a trigger first makes every row the application writes
// meanwhile come out as the backfill would make it; then the backfill walks the table in
// ranges of `_pk`, each its own short transaction. Rows the batches already passed and rows
// they have not reached are both right at the end. The triggers go in the switch-over.

extension FillJoinTable: OnlineChange {
    /// Links copied into a new join table from a to-one column, or from a join table owned by
    /// the other side before a rename. A trigger on the links' table mirrors every insert,
    /// update and delete into the new join table; the batches lock the rows
    /// they read (`FOR SHARE`), so a row updated meanwhile is copied as it was committed. The
    /// positions of ordered links come from the row itself (the order column the source kept
    /// beside the link, or 0 where the row holds its owner's only link), or are numbered
    /// across rows once the links are copied (`OnlinePositions`), where the source kept no
    /// order among several links of an owner.
    func onlineForm(in schema: String) -> OnlineForm {
        // A to-one column holds a link where it is set, and its rows are walked by `_pk`; a
        // join table holds a link in every row, walked by ranges of the owners' keys.
        let set = links.requiredNotNull
        let walked: (table: String, key: String)
        if set != nil {
            walked = (links.table, "_pk")
        } else if let owners = links.ownerFilter?.table ?? referencedTables[ownerColumn] {
            walked = (owners, links.a)
        } else {
            return .refused(OnlineRefusal(.onlineUnsupportedLinkOwners, "copy links from \(links.table) into \(table): the table of the links' owners is not known, so the copy's batches cannot walk them (docs/online-migrations.md, Limits)"))
        }
        // Only the links of the owners' entities the destination covers, where the source kept
        // those of more (an owner changing entity takes its links along: `OnlineLinkOwners`).
        let owned = { (row: SQL) -> SQL in
            links.ownerFilter.map {
                " AND \(row)\(ident: links.a) IN (SELECT \(ident: "_pk") FROM \(ident: schema, $0.table) WHERE \(ident: "_entity") IN (\(literals: $0.entities)))"
            } ?? ""
        }
        // Each order column's source column, or nil: 0, or NULL until numbered across rows.
        var positions: [String?] = []
        var numbered: [OnlinePositions] = []
        for order in orderColumns {
            let (kept, partition) = order.side == .target ? (links.orderOfB, links.a) : (links.orderOfA, links.b)
            positions.append(kept)
            guard kept == nil, partition != "_pk" else { continue }
            let (owner, target) = order.side == .target ? (ownerColumn, targetColumn) : (targetColumn, ownerColumn)
            guard let ownerTable = referencedTables[owner] else {
                return .refused(OnlineRefusal(.onlineUnsupportedPositionOwners, "copy links from \(links.table) into \(table): \(order.column) numbers the links of each \(partition) across rows, and the table of its owners is not known (docs/online-migrations.md, Limits)"))
            }
            numbered.append(OnlinePositions(table: table, column: order.column, owner: owner, orderBy: target, keys: [ownerColumn, targetColumn], ownerTable: ownerTable))
        }
        let isNumbered = Set(numbered.map(\.column))
        // Each sub-entity's join table filled from its parent's has a trigger of its own there.
        let trigger = OnlineTrigger.named("links", table: links.table, column: (set ?? links.a) + (links.ownerFilter.map { _ in " into " + table } ?? ""))
        let (a, b) = (links.a, links.b)
        let holds = { (row: SQL) -> SQL in set.map { " AND \(row).\(ident: $0) IS NOT NULL" } ?? "" }
        let read = [a, b] + positions.compactMap { $0 }
        let columns = [ownerColumn, targetColumn] + orderColumns.map(\.column)
        let values = { (row: SQL) -> SQL in
            SQL.joined([a, b].map { "\(row)\(ident: $0)" } + zip(positions, orderColumns).map { kept, order in
                kept.map { "\(row)\(ident: $0)" } ?? (isNumbered.contains(order.column) ? "NULL" : "0")
            }, separator: ", ")
        }
        let unchanged = SQL.joined(read.map { "OLD.\(ident: $0) IS NOT DISTINCT FROM NEW.\(ident: $0)" }, separator: " AND ")
        let body: SQL = """
            BEGIN
                IF TG_OP = 'UPDATE' AND \(unchanged) THEN
                    RETURN NULL;
                END IF;
                IF TG_OP <> 'INSERT'\(holds("OLD")) THEN
                    DELETE FROM \(ident: schema, table) WHERE \(ident: ownerColumn) = OLD.\(ident: a) AND \(ident: targetColumn) = OLD.\(ident: b);
                END IF;
                IF TG_OP <> 'DELETE'\(holds("NEW"))\(owned("NEW.")) THEN
                    INSERT INTO \(ident: schema, table) (\(idents: columns)) VALUES (\(values("NEW."))) ON CONFLICT DO NOTHING;
                END IF;
                RETURN NULL;
            END
            """
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body, summary: "mirrors the links of \(links.table) into \(table)"),
            summary: "trigger on \(links.table): links written are mirrored into \(table)"
        )
        install.installs = [trigger]
        install.following(truncate: TruncateFollowing(clearing: "DELETE FROM \(ident: schema, table)", cleared: "the links copied into \(table)"), of: trigger, in: schema)
        if let owners = ownerEntityTrigger(in: schema, columns: columns, values: values("")) {
            install.statements += owners.statements
            install.installs.append(owners.trigger)
            install.summary += "; a row of \(owners.trigger.table) changing entity takes its links along"
        }
        let prefix: SQL = """
            INSERT INTO \(ident: schema, table) (\(idents: columns)) \
            SELECT \(values("")) FROM \(ident: schema, links.table) WHERE \(ident: set ?? a) IS NOT NULL\(owned(""))
            """
        let copy: [OnlinePhase] = [
            install,
            .batched(
                BatchedStatement(schema: schema, table: walked.table, prefix: prefix, key: "\(ident: walked.key)", suffix: " FOR SHARE ON CONFLICT DO NOTHING").analyzing(table),
                summary: "copy links from \(links.table) into \(table), in batches"
            ),
        ]
        // Numbered once copied: the links the trigger mirrors meanwhile log their owners.
        let numbering = numbered.map { $0.form(in: schema) }
        guard !numbering.isEmpty else { return .phases(copy) }
        return .phasesThenAtSwitchOver(copy + numbering.flatMap(\.phases), numbering.flatMap(\.atSwitchOver))
    }
}

// Links copied into a new join table for the owners of some entities only (an entity leaving
// its hierarchy takes its links out of the parent's join table; a parent's many-to-many moved
// down to each sub-entity), under `apply --online`. The mirroring trigger on the links' table
// follows the links written, but an owner whose `_entity` the application changes keeps its
// links where they are: the batches may have passed it. So a second trigger, on the owners'
// table, follows the owner: `AFTER UPDATE OF _entity`, when it becomes one of the entities the
// new join table covers, its links are copied from the links' table (`ON CONFLICT DO NOTHING`);
// when it stops being one, its links leave the new join table. Each new join table filled
// from the same links has its own, so an owner moving between two sub-entities moves its
// links from one to the other. The switch-over drops it with the others.

extension FillJoinTable {
    /// The trigger following owners changing entity, with its install statements; nil where
    /// the links are not chosen by their owner's entity. `values` reads a link's columns from
    /// the links' table, in the order of `columns`.
    func ownerEntityTrigger(in schema: String, columns: [String], values: SQL) -> (trigger: OnlineTrigger, statements: [PlannedStatement])? {
        guard let filter = links.ownerFilter else { return nil }
        let trigger = OnlineTrigger.named("relinked", table: filter.table, column: table)
        let covered: SQL = "(\(literals: filter.entities))"
        let holds = links.requiredNotNull.map { " AND \(ident: $0) IS NOT NULL" as SQL } ?? ""
        let body: SQL = """
            BEGIN
                IF OLD.\(ident: "_entity") IN \(covered) AND (NEW.\(ident: "_entity") NOT IN \(covered) OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk")) THEN
                    DELETE FROM \(ident: schema, table) WHERE \(ident: ownerColumn) = OLD.\(ident: "_pk");
                END IF;
                IF NEW.\(ident: "_entity") IN \(covered) AND (OLD.\(ident: "_entity") NOT IN \(covered) OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk")) THEN
                    INSERT INTO \(ident: schema, table) (\(idents: columns)) SELECT \(values) FROM \(ident: schema, links.table)
                    WHERE \(ident: links.a) = NEW.\(ident: "_pk")\(holds) ON CONFLICT DO NOTHING;
                END IF;
                RETURN NULL;
            END
            """
        let summary = "the links of a row of \(filter.table) turned into \(filter.entities.joined(separator: ", ")) are copied into \(table), those of one turned into another entity leave it"
        return (trigger, trigger.installStatements(in: schema, timing: "AFTER UPDATE OF \(quoteIdentifier("_entity"))", body: body, summary: summary))
    }
}
