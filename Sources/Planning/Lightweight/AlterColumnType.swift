import SQLBuilding

/// A lossless widening (smallint -> integer -> bigint, real -> double precision, integer ->
/// numeric): every value converts exactly, but PostgreSQL rewrites the table and its indexes
/// under an ACCESS EXCLUSIVE lock.
struct AlterColumnType: SchemaChange {
    var table: String
    var column: String
    var from: String
    var to: String

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) TYPE \(unsafeRaw: to)",
            lock: .accessExclusive, summary: "widen \(table).\(column) from \(from) to \(to)"
        )]
    }

    var hazards: [Hazard] {
        [
            .tableRewrite("widening \(table).\(column) from \(from) to \(to) rewrites the table and its indexes"),
            .longLock("\(table) is locked against reads and writes while it is rewritten"),
        ]
    }
}

/// The column default follows the destination's default value (and `_entity`'s default follows
/// the hierarchy's only concrete entity).
struct ChangeColumnDefault: SchemaChange {
    var table: String
    var column: String
    /// SQL text built from quoted literals only; nil drops the default.
    var expression: String?

    func statements(in schema: String) -> [PlannedStatement] {
        if let expression {
            return [PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET DEFAULT \(unsafeRaw: expression)",
                lock: .accessExclusive, summary: "set default of \(table).\(column)"
            )]
        }
        return [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP DEFAULT",
            lock: .accessExclusive, summary: "drop default of \(table).\(column)"
        )]
    }
}
