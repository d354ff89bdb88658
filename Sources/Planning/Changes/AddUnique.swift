import SQLBuilding

/// A uniqueness constraint: `UNIQUE` on a root entity, a partial unique index on a sub-entity.
struct AddUnique: SchemaChange {
    var kind: ChangeKind { .addUnique(self) }
    var table: String
    var unique: UniqueConstraint
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        let sql: SQL
        if let scope = unique.entityScope {
            sql = """
                CREATE UNIQUE INDEX \(ident: unique.name) ON \(ident: schema, table) (\(idents: unique.columns)) \
                WHERE \(ident: "_entity") IN (\(literals: scope))
                """
        } else {
            sql = "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: unique.name) UNIQUE (\(idents: unique.columns))"
        }
        return [PlannedStatement(sql, lock: unique.entityScope == nil ? .accessExclusive : .share, summary: "unique \(table) (\(unique.columns.joined(separator: ", ")))")]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("building \(unique.name) reads every row of \(table)")] : []
    }
}

extension AddUnique: OnlineChange {
    /// The unique index built concurrently; a root entity's `UNIQUE` constraint then adopts it.
    func onlineForm(in schema: String) -> OnlineForm {
        var sql: SQL = "CREATE UNIQUE INDEX CONCURRENTLY \(ident: unique.name) ON \(ident: schema, table) (\(idents: unique.columns))"
        if let scope = unique.entityScope {
            sql.append(" WHERE \(ident: "_entity") IN (\(literals: scope))")
        }
        let columns = unique.columns.joined(separator: ", ")
        var phases: [OnlinePhase] = [.concurrently(
            PlannedStatement(sql, lock: .shareUpdateExclusive, summary: "unique index \(table) (\(columns)), concurrently"), index: unique.name
        )]
        if unique.entityScope == nil {
            phases.append(.instant([PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: unique.name) UNIQUE USING INDEX \(ident: unique.name)",
                lock: .accessExclusive, summary: "unique \(table) (\(columns)) using the index"
            )]))
        }
        return .phases(phases)
    }
}
