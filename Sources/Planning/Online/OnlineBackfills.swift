import SQLBuilding

// Backfills under `apply --online`: a trigger first makes every row the application writes
// meanwhile come out as the backfill would make it; then the backfill walks the table in
// ranges of `_pk`, each its own short transaction. Rows the batches already passed and rows
// they have not reached are both right at the end. The triggers go in the switch-over.

extension BackfillNulls: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("backfill", table: table, column: column)
        var condition: SQL = "NEW.\(ident: column) IS NULL"
        if let entities { condition.append(" AND NEW.\(ident: "_entity") IN (\(literals: entities))") }
        let body: SQL = "BEGIN IF \(condition) THEN NEW.\(ident: column) := \(value); END IF; RETURN NEW; END"
        var prefix: SQL = "UPDATE \(ident: schema, table) SET \(ident: column) = \(value) WHERE \(ident: column) IS NULL"
        if let entities { prefix.append(" AND \(ident: "_entity") IN (\(literals: entities))") }
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, does: "rows written meanwhile get \(column)'s default for NULL",
            batches: BatchedStatement(schema: schema, table: table, prefix: prefix), summary: "backfill NULLs of \(table).\(column) with its default, in batches"
        ))
    }
}

extension UpdateEntityNames: OnlineChange {
    /// The trigger's name sorts before every other BEFORE trigger's (`_` before letters), so it
    /// fires first, as the offline step renames entities before its backfills and copies: those
    /// read `_entity` by the destination's names.
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("_entity", table: table, column: "_entity")
        var cases: SQL = ""
        for rename in renames { cases.append(" WHEN \(literal: rename.from) THEN \(literal: rename.to)") }
        let body: SQL = """
            BEGIN IF NEW.\(ident: "_entity") IN (\(literals: renames.map(\.from))) \
            THEN NEW.\(ident: "_entity") := CASE NEW.\(ident: "_entity")\(cases) END; END IF; RETURN NEW; END
            """
        let offline = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, does: "rows written meanwhile get the new entity names",
            batches: BatchedStatement(schema: schema, table: table, prefix: offline.sql), summary: offline.summary + ", in batches"
        ))
    }
}

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
                BatchedStatement(schema: schema, table: walked.table, prefix: prefix, key: "\(ident: walked.key)", suffix: " FOR SHARE ON CONFLICT DO NOTHING"),
                summary: "copy links from \(links.table) into \(table), in batches"
            ),
        ]
        // Numbered once copied: the links the trigger mirrors meanwhile log their owners.
        let numbering = numbered.map { $0.form(in: schema) }
        guard !numbering.isEmpty else { return .phases(copy) }
        return .phasesThenAtSwitchOver(copy + numbering.flatMap(\.phases), numbering.flatMap(\.atSwitchOver))
    }
}
