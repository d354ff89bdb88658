import SQLBuilding

/// A column made nullable: a property made optional, or one that some entities of the
/// hierarchy no longer have. Done early, before any value is cleared.
struct DropNotNull: SchemaChange {
    var table: String
    var column: String

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP NOT NULL",
            lock: .accessExclusive, summary: "make \(table).\(column) nullable"
        )]
    }
}

/// A column made NOT NULL at the end of the step, after NULLs were backfilled (or the rows were
/// checked to have none). PostgreSQL reads every row to validate it.
struct SetNotNull: SchemaChange {
    var table: String
    var column: String
    /// The table has rows from the source store.
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET NOT NULL",
            lock: .accessExclusive, summary: "make \(table).\(column) NOT NULL"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("making \(table).\(column) NOT NULL reads every row of \(table) under an ACCESS EXCLUSIVE lock")] : []
    }
}

/// NULLs of a property made required are set to its default, in the rows of the entities that
/// must have it (nil: every row of the table).
struct BackfillNulls: SchemaChange {
    var table: String
    var column: String
    /// The column's default expression.
    var value: SQL
    var entities: [String]?

    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = "UPDATE \(ident: schema, table) SET \(ident: column) = \(value) WHERE \(ident: column) IS NULL"
        if let entities { sql.append(" AND \(ident: "_entity") IN (\(literals: entities))") }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "backfill NULLs of \(table).\(column) with its default")]
    }

    var hazards: [Hazard] {
        [.fullScan("backfilling \(table).\(column) reads every row of \(table) and writes each NULL")]
    }
}

/// Values of a column in the rows of entities that no longer have its property (a property
/// moved down to a sub-entity): dropped, as Core Data drops them.
struct ClearValues: SchemaChange {
    var table: String
    var column: String
    var entities: [String]
    /// What `apply --online` needs to build the column beside the old one (`describing`).
    var type = ""
    var defaultExpression: SQL?
    var covering: [CoveringConstraint] = []

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: "_entity") IN (\(literals: entities)) AND \(ident: column) IS NOT NULL",
            lock: .rowExclusive, summary: "clear \(table).\(column) in rows of \(entities.joined(separator: ", ")) (property no longer theirs)"
        )]
    }
}
