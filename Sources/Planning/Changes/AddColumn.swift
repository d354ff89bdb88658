import SQLBuilding

/// A new column. With a constant default, existing rows get the default without a rewrite
/// (PostgreSQL 11 and later), so a non-optional attribute with a default is added `NOT NULL` in
/// one instant step. Without one, NOT NULL is set at the end of the step, after the rows were
/// checked.
struct AddColumn: SchemaChange {
    var kind: ChangeKind { .addColumn(self) }
    var table: String
    var column: ColumnLayout

    /// Added NOT NULL at once: only with a default to give existing rows.
    var isNotNullAtOnce: Bool { !column.isNullable && column.defaultExpression != nil }

    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = "ALTER TABLE \(ident: schema, table) ADD COLUMN \(ident: column.name) \(unsafeRaw: column.type)"
        if isNotNullAtOnce { sql.append(" NOT NULL") }
        if let expression = column.defaultExpression { sql.append(" DEFAULT \(expression)") }
        return [PlannedStatement(sql, lock: .accessExclusive, summary: "add column \(table).\(column.name)\(Self.describe(column.role))")]
    }

    static func describe(_ role: ColumnLayout.Role) -> String {
        switch role {
        case .attribute(let entity, let name): " (attribute \(entity).\(name))"
        case .toOne(let entity, let relationship): " (relationship \(entity).\(relationship))"
        case .order(let entity, let relationship): " (order of \(entity).\(relationship))"
        case .primaryKey, .entityName, .joinOwner, .joinTarget: ""
        }
    }
}

extension AddColumn: InstantChange {}
