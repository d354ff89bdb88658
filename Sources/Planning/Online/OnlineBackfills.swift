import SQLBuilding

// Backfills under `apply --online`: a trigger first makes every row the application writes
// meanwhile come out as the backfill would make it; then the backfill walks the table in
// ranges of `_pk`, each its own short transaction. Rows the batches already passed and rows
// they have not reached are both right at the end. The triggers go in the switch-over.

extension BackfillNulls: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("backfill", table: table, column: column)
        var condition = "NEW.\(quoteIdentifier(column)) IS NULL"
        if let entities { condition += " AND NEW.\(quoteIdentifier("_entity")) IN (\(entities.map(quoteLiteral).joined(separator: ", ")))" }
        let body = "BEGIN IF \(condition) THEN NEW.\(quoteIdentifier(column)) := \(value); END IF; RETURN NEW; END"
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, summary: "rows written get the default of \(column) for NULL"),
            summary: "trigger on \(table): rows written meanwhile get \(column)'s default for NULL"
        )
        install.installs = [trigger]
        var prefix: SQL = "UPDATE \(ident: schema, table) SET \(ident: column) = \(value) WHERE \(ident: column) IS NULL"
        if let entities { prefix.append(" AND \(ident: "_entity") IN (\(literals: entities))") }
        return .phases([
            install,
            .batched(BatchedStatement(schema: schema, table: table, prefix: prefix), summary: "backfill NULLs of \(table).\(column) with its default, in batches"),
        ])
    }
}

extension UpdateEntityNames: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("entity", table: table, column: "_entity")
        let entity = quoteIdentifier("_entity")
        let cases = renames.map { "WHEN \(quoteLiteral($0.from)) THEN \(quoteLiteral($0.to))" }.joined(separator: " ")
        let body = "BEGIN IF NEW.\(entity) IN (\(renames.map { quoteLiteral($0.from) }.joined(separator: ", "))) THEN NEW.\(entity) := CASE NEW.\(entity) \(cases) END; END IF; RETURN NEW; END"
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, summary: "rows written get the new entity names"),
            summary: "trigger on \(table): rows written meanwhile get the new entity names"
        )
        install.installs = [trigger]
        let offline = statements(in: schema)[0]
        return .phases([
            install,
            .batched(BatchedStatement(schema: schema, table: table, prefix: offline.sql), summary: offline.summary + ", in batches"),
        ])
    }
}

extension FillJoinTable: OnlineChange {
    /// A to-one column's links copied into a new join table. A trigger on the column's table
    /// mirrors every insert, update and delete into the join table; the batches lock the rows
    /// they read (`FOR SHARE`), so a row updated meanwhile is copied as it was committed.
    func onlineForm(in schema: String) -> OnlineForm {
        guard orderColumns.isEmpty, links.ownerFilter == nil, let column = links.requiredNotNull,
              links.origins.allSatisfy({ if case .column = $0 { true } else { false } }) else {
            return .refused("copy links from \(links.table) into \(table): only a to-one column's unordered links move online yet (docs/online-migrations.md, Limits)")
        }
        let trigger = OnlineTrigger.named("links", table: links.table, column: column)
        let (owner, target) = (quoteIdentifier(ownerColumn), quoteIdentifier(targetColumn))
        let joinTable = "\(quoteIdentifier(schema)).\(quoteIdentifier(table))"
        let (a, b, set) = (quoteIdentifier(links.a), quoteIdentifier(links.b), quoteIdentifier(column))
        let body = """
            BEGIN
                IF TG_OP = 'UPDATE' AND OLD.\(a) IS NOT DISTINCT FROM NEW.\(a) AND OLD.\(b) IS NOT DISTINCT FROM NEW.\(b) THEN
                    RETURN NULL;
                END IF;
                IF TG_OP <> 'INSERT' AND OLD.\(set) IS NOT NULL THEN
                    DELETE FROM \(joinTable) WHERE \(owner) = OLD.\(a) AND \(target) = OLD.\(b);
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.\(set) IS NOT NULL THEN
                    INSERT INTO \(joinTable) (\(owner), \(target)) VALUES (NEW.\(a), NEW.\(b)) ON CONFLICT DO NOTHING;
                END IF;
                RETURN NULL;
            END
            """
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body, summary: "mirrors \(links.table).\(column) into \(table)"),
            summary: "trigger on \(links.table): writes to \(column) are mirrored into \(table)"
        )
        install.installs = [trigger]
        let prefix: SQL = """
            INSERT INTO \(ident: schema, table) (\(idents: [ownerColumn, targetColumn])) \
            SELECT \(ident: links.a), \(ident: links.b) FROM \(ident: schema, links.table) WHERE \(ident: column) IS NOT NULL
            """
        return .phases([
            install,
            .batched(
                BatchedStatement(schema: schema, table: links.table, prefix: prefix, suffix: " FOR SHARE ON CONFLICT DO NOTHING"),
                summary: "copy links from \(links.table) into \(table), in batches"
            ),
        ])
    }
}
