import SQLBuilding

/// The SQL of an old table's view: the view, its columns' old defaults and, when PostgreSQL
/// cannot write through it, an INSTEAD OF trigger that writes the new tables.
extension OldTableView {
    func statements(viewSchema: String, storeSchema: String) -> [SQL] {
        var statements: [SQL] = [createView(viewSchema: viewSchema, storeSchema: storeSchema)]
        for column in columns {
            guard let value = column.defaultValue else { continue }
            statements.append("ALTER VIEW \(ident: viewSchema, name) ALTER COLUMN \(ident: column.name) SET DEFAULT \(value)")
        }
        if !isAutoUpdatable {
            let function = name + "_write"
            statements.append("""
                CREATE FUNCTION \(ident: viewSchema, function)() RETURNS trigger LANGUAGE plpgsql AS \
                \(SQL.dollarQuoted(triggerBody(storeSchema: storeSchema), tag: "expand"))
                """)
            statements.append("""
                CREATE TRIGGER \(ident: "write") INSTEAD OF INSERT OR UPDATE OR DELETE ON \(ident: viewSchema, name) \
                FOR EACH ROW EXECUTE FUNCTION \(ident: viewSchema, function)()
                """)
        }
        return statements
    }

    // MARK: Reading

    private func createView(viewSchema: String, storeSchema: String) -> SQL {
        let list = SQL.joined(columns.map { "\(read($0, storeSchema: storeSchema)) AS \(ident: $0.name)" }, separator: ", ")
        var sql: SQL = "CREATE VIEW \(ident: viewSchema, name) AS SELECT \(list)"
        guard let base else {
            sql.append(" WHERE false")
            return sql
        }
        sql.append(" FROM \(ident: storeSchema, base) AS t")
        if let entities {
            // No entity the old version knows has rows here (its entities were all abstract).
            sql.append(entities.isEmpty ? " WHERE false" : " WHERE t.\(ident: "_entity") IN (\(literals: entities))")
        }
        return sql
    }

    /// The old column's value, from the new table's row `t`.
    private func read(_ column: ViewColumn, storeSchema: String) -> SQL {
        switch column.source {
        case .column(let name, let newType, _):
            if newType == column.type { return "t.\(ident: name)" }
            if column.type == "boolean" { return "(t.\(ident: name) <> 0)" }
            return "CAST(t.\(ident: name) AS \(unsafeRaw: column.type))"
        case .entityName(let renames):
            guard !renames.isEmpty else { return "t.\(ident: "_entity")" }
            let cases = SQL.joined(renames.map { "WHEN \(literal: $0.new) THEN \(literal: $0.old)" }, separator: " ")
            return "CASE t.\(ident: "_entity") \(cases) ELSE t.\(ident: "_entity") END"
        case .constant(let value):
            return "CAST(\(value) AS \(unsafeRaw: column.type))"
        case .position(let owner, let orderBy):
            return """
                CASE WHEN t.\(ident: owner) IS NULL THEN NULL ELSE (SELECT count(*) FROM \(ident: storeSchema, base!) AS p \
                WHERE p.\(ident: owner) = t.\(ident: owner) AND p.\(ident: orderBy) < t.\(ident: orderBy))::integer END
                """
        case .firstLink(let links):
            var order: SQL = links.order.map { "l.\(ident: $0) NULLS LAST, " } ?? ""
            order.append("l.\(ident: links.target)")
            return """
                (SELECT l.\(ident: links.target) FROM \(ident: storeSchema, links.table) AS l \
                WHERE l.\(ident: links.owner) = t.\(ident: "_pk") ORDER BY \(order) LIMIT 1)
                """
        }
    }

    // MARK: Writing

    /// 1. A delete removes the new row. 2. An insert takes `_pk` from the new table's identity
    /// when the old version gives none, then writes every new column its columns hold; an
    /// update sets them. 3. Links of to-ones made to-many are replaced in their join tables.
    private func triggerBody(storeSchema: String) -> SQL {
        guard let base else {
            return "BEGIN IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END"
        }
        let table: SQL = "\(ident: storeSchema, base)"
        let matchesOld = SQL.joined(keys.map { key in
            let column = columns.first { $0.name == key }!
            return "t.\(ident: column.writtenColumn!) = OLD.\(ident: key)"
        }, separator: " AND ")
        let written = writes()
        var body: SQL = "BEGIN\nIF TG_OP = 'DELETE' THEN\n  DELETE FROM \(table) AS t WHERE \(matchesOld);\n  RETURN OLD;\nEND IF;\n"
        body.append("IF TG_OP = 'INSERT' THEN\n")
        if hasIdentity {
            body.append("""
                  IF NEW.\(ident: "_pk") IS NULL THEN NEW.\(ident: "_pk") := nextval(pg_get_serial_sequence(\(nameLiteral: storeSchema, base), '_pk')); END IF;

                """)
        }
        let inserted = written + appendedPositions.map { ($0.column, position($0, in: table, written: written, isUpdate: false)) }
        body.append("  INSERT INTO \(table) (\(idents: inserted.map(\.column))) VALUES (\(SQL.joined(inserted.map(\.value), separator: ", ")));\nELSE\n")
        let updated = written + appendedPositions.map { ($0.column, position($0, in: table, written: written, isUpdate: true)) }
        let assignments = SQL.joined(updated.map { "\(ident: $0.column) = \($0.value)" }, separator: ", ")
        body.append("  UPDATE \(table) AS t SET \(assignments) WHERE \(matchesOld);\nEND IF;\n")
        for column in columns {
            guard case .firstLink(let links) = column.source else { continue }
            body.append(replaceLinks(of: column, links, storeSchema: storeSchema))
        }
        body.append("RETURN NEW;\nEND")
        return body
    }

    /// New column -> the value written, for every new column an old column holds.
    private func writes() -> [(column: String, value: SQL)] {
        let entity: SQL = columns.first { $0.name == "_entity" }.map(write) ?? "NULL"
        return columns.compactMap { column in
            guard let target = column.writtenColumn else { return nil }
            var value = write(column)
            if case .column(_, _, let required?) = column.source {
                let filled: SQL = "coalesce(\(value), \(required.value))"
                if let entities = required.entities {
                    value = "CASE WHEN \(entity) IN (\(literals: entities)) THEN \(filled) ELSE \(value) END"
                } else {
                    value = filled
                }
            }
            return (target, value)
        }
    }

    /// The value the old version writes, converted to the new column's type or name.
    private func write(_ column: ViewColumn) -> SQL {
        let value: SQL = "NEW.\(ident: column.name)"
        switch column.source {
        case .column(_, let newType, _):
            if newType == column.type { return value }
            if column.type == "boolean" { return "CAST(CAST(\(value) AS integer) AS \(unsafeRaw: newType))" }
            return "CAST(\(value) AS \(unsafeRaw: newType))"
        case .entityName(let renames):
            guard !renames.isEmpty else { return value }
            let cases = SQL.joined(renames.map { "WHEN \(literal: $0.old) THEN \(literal: $0.new)" }, separator: " ")
            return "CASE \(value) \(cases) ELSE \(value) END"
        case .constant, .position, .firstLink:
            return value
        }
    }

    /// Last among the owner's links; an update that keeps the owner keeps the position.
    private func position(_ appended: AppendedPosition, in table: SQL, written: [(column: String, value: SQL)], isUpdate: Bool) -> SQL {
        let owner = written.first { $0.column == appended.owner }?.value ?? "NULL"
        let last: SQL = """
            CASE WHEN \(owner) IS NULL THEN NULL ELSE (SELECT coalesce(max(p.\(ident: appended.column)) + 1, 0) \
            FROM \(table) AS p WHERE p.\(ident: appended.owner) = \(owner)) END
            """
        guard isUpdate else { return last }
        return "CASE WHEN t.\(ident: appended.owner) IS NOT DISTINCT FROM \(owner) THEN t.\(ident: appended.column) ELSE \(last) END"
    }

    /// The old version sets a to-one: the row's links become that one link.
    private func replaceLinks(of column: ViewColumn, _ links: JoinLinks, storeSchema: String) -> SQL {
        let table: SQL = "\(ident: storeSchema, links.table)"
        let value: SQL = "NEW.\(ident: column.name)"
        let owner: SQL = "NEW.\(ident: "_pk")"
        var columnsWritten = [links.owner, links.target]
        var values: [SQL] = [owner, value]
        if let order = links.order {
            columnsWritten.append(order)
            values.append("0")
        }
        if let order = links.inverseOrder {
            columnsWritten.append(order)
            values.append("(SELECT coalesce(max(p.\(ident: order)) + 1, 0) FROM \(table) AS p WHERE p.\(ident: links.target) = \(value))")
        }
        return """
            IF TG_OP = 'INSERT' OR \(value) IS DISTINCT FROM OLD.\(ident: column.name) THEN
              DELETE FROM \(table) WHERE \(ident: links.owner) = \(owner);
              IF \(value) IS NOT NULL THEN
                INSERT INTO \(table) (\(idents: columnsWritten)) VALUES (\(SQL.joined(values, separator: ", ")));
              END IF;
            END IF;

            """
    }
}
