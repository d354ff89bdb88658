import SQLBuilding

/// A column's type changes between numbers (`NumberConversion`). Values that would not convert
/// exactly were counted first (`DataCheck`), so every value converts exactly; PostgreSQL
/// rewrites the table and its indexes under an ACCESS EXCLUSIVE lock.
struct AlterColumnType: SchemaChange {
    var table: String
    var column: String
    var from: String
    var to: String
    /// The conversion of the column's value; nil: PostgreSQL's own cast.
    var using: SQL?
    /// The old default cannot be cast to the new type: dropped first.
    var dropsDefault = false
    /// What `apply --online` needs to build the column beside the old one (`describing`).
    var isNotNull = false
    var defaultExpression: SQL?
    var covering: [CoveringConstraint] = []

    func statements(in schema: String) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        if dropsDefault {
            statements.append(PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP DEFAULT",
                lock: .accessExclusive, summary: "drop default of \(table).\(column) before its type changes"
            ))
        }
        var alter: SQL = "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) TYPE \(unsafeRaw: to)"
        if let using { alter.append(" USING \(using)") }
        statements.append(PlannedStatement(alter, lock: .accessExclusive, summary: "change \(table).\(column) from \(from) to \(to)"))
        return statements
    }

    var hazards: [Hazard] {
        [
            .tableRewrite("changing \(table).\(column) from \(from) to \(to) rewrites the table and its indexes"),
            .longLock("\(table) is locked against reads and writes while it is rewritten"),
        ]
    }
}

/// Floating-point numbers printed in their shortest exact form (PostgreSQL's default, which a
/// server or role may change), for the conversions and checks that read them as text.
struct ShortestFloatText: SchemaChange {
    /// As `SET` and a function's `SET` clause spell it.
    static let setting: SQL = "extra_float_digits = 1"

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement("SET LOCAL \(Self.setting)", lock: .none, summary: "print floating-point numbers in their shortest exact form")]
    }
}

/// The column default follows the destination's default value (and `_entity`'s default follows
/// the hierarchy's only concrete entity).
struct ChangeColumnDefault: SchemaChange {
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
