import SQLBuilding

/// A new column. With a constant default, existing rows get the default without a rewrite
/// (PostgreSQL 11 and later), so a non-optional attribute with a default is added `NOT NULL` in
/// one instant step. Without one, NOT NULL is set at the end of the step, after the rows were
/// checked.
struct AddColumn: SchemaChange {
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

/// A source column the destination has no place for. Lossy for a removed attribute or
/// relationship; not for a column whose values were copied elsewhere first (a to-one made
/// to-many), nor for an order column of a relationship made unordered.
struct DropColumn: SchemaChange {
    var table: String
    var column: String
    var reason: Reason
    /// A removed column holding a foreign key: the table's name after the step's renames, where
    /// `apply --online` drops it in the switch-over rather than first, so that the key's delete
    /// rule (CASCADE, or a denying key) keeps acting on the application's deletes, as the old
    /// version has it, until then. Nil otherwise: where the destination table reuses the
    /// column's name, or the key points at a table the step drops (a removed entity's, dropped
    /// first: the key would hold it).
    var keyedTableAfterRenames: String?

    enum Reason: Sendable {
        case removed
        case moved
        case madeUnordered
    }

    func statements(in schema: String) -> [PlannedStatement] {
        let why = switch reason {
        case .removed: "removed from the model"
        case .moved: "values moved"
        case .madeUnordered: "relationship made unordered"
        }
        return [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) DROP COLUMN \(ident: column)",
            lock: .accessExclusive, summary: "drop column \(table).\(column) (\(why))"
        )]
    }
}
