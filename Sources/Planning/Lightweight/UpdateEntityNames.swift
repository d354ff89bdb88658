import SQLBuilding

/// Rows of renamed entities get their new name in `_entity`, which names each row's concrete
/// entity. Runs while the table's `_entity` check is dropped (it lists the names).
struct UpdateEntityNames: SchemaChange {
    var table: String
    /// Source name -> destination name, for entities whose rows stay in this table.
    var renames: [(from: String, to: String)]

    func statements(in schema: String) -> [PlannedStatement] {
        var cases: [SQL] = []
        for rename in renames {
            cases.append("WHEN \(literal: rename.from) THEN \(literal: rename.to)")
        }
        var sql: SQL = "UPDATE \(ident: schema, table) SET \(ident: "_entity") = CASE \(ident: "_entity") "
        sql.append(SQL.joined(cases, separator: " "))
        sql.append(" END WHERE \(ident: "_entity") IN (\(literals: renames.map(\.from)))")
        let names = renames.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "rename entities in \(table)._entity: \(names)")]
    }

    var hazards: [Hazard] {
        [.fullScan("updates _entity in every row of \(table) whose entity was renamed (\(renames.map(\.from).joined(separator: ", ")))")]
    }
}
