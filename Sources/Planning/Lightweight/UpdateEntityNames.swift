import SQLBuilding

/// Rows of renamed entities get their new name in `_entity`, which names each row's concrete
/// entity. Runs while the table's `_entity` check is dropped (it lists the names).
struct UpdateEntityNames: SchemaChange {
    var table: String
    /// Source name -> destination name, for entities whose rows stay in this table.
    var renames: [(from: String, to: String)]

    func statements(in schema: String) -> [PlannedStatement] {
        let sql: SQL = """
            UPDATE \(ident: schema, table) SET \(ident: "_entity") = \(Self.renamed(renames)) \
            WHERE \(ident: "_entity") IN (\(literals: renames.map(\.from)))
            """
        let names = renames.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "rename entities in \(table)._entity: \(names)")]
    }

    /// A row's new `_entity`: `CASE _entity WHEN 'Old' THEN 'New' … END` (`CopyRows` too).
    static func renamed(_ renames: [(from: String, to: String)]) -> SQL {
        let cases = renames.map { rename -> SQL in "WHEN \(literal: rename.from) THEN \(literal: rename.to)" }
        return "CASE \(ident: "_entity") \(SQL.joined(cases, separator: " ")) END"
    }

    var hazards: [Hazard] {
        [.fullScan("updates _entity in every row of \(table) whose entity was renamed (\(renames.map(\.from).joined(separator: ", ")))")]
    }
}
