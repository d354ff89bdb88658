import SQLBuilding

/// The column default follows the destination's default value (and `_entity`'s default follows
/// the hierarchy's only concrete entity).
struct ChangeColumnDefault: SchemaChange {
    var kind: ChangeKind { .changeColumnDefault(self) }
    var table: String
    var column: String
    /// Nil drops the default.
    var expression: SQL?

    func statements(in schema: String) -> [PlannedStatement] {
        if let expression {
            return [PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET DEFAULT \(expression)",
                lock: .accessExclusive, summary: "set default of \(table).\(column)"
            )]
        }
        return [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP DEFAULT",
            lock: .accessExclusive, summary: "drop default of \(table).\(column)"
        )]
    }
}

extension ChangeColumnDefault: InstantChange {}
