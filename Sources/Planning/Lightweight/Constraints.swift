import SQLBuilding

/// A CHECK constraint: the `_entity` check listing the hierarchy's concrete entities, or a
/// sub-entity's required property. Dropped when it changes; added (reading every row) at the end.
struct DropConstraint: SchemaChange {
    var table: String
    var name: String
    /// A foreign key whose column the destination does not have: dropping the column (or its
    /// table) drops it too, which `apply --online` leaves to that drop.
    var goesWithItsColumn = false
    /// A foreign key whose column continues (its referenced table or delete rule changes): the
    /// column in the destination, where a new key replaces it. `apply --online` pairs the two
    /// when the new key points at rows moved to another table.
    var continuingColumn: LightweightDiff.ColumnKey?

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: name)",
            lock: .accessExclusive, summary: "drop constraint \(name) on \(table)"
        )]
    }
}

struct AddCheck: SchemaChange {
    var table: String
    var check: CheckConstraint
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: check.name) CHECK (\(check.expression))",
            lock: .accessExclusive, summary: "check \(check.name) on \(table)"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("validating \(check.name) reads every row of \(table) under an ACCESS EXCLUSIVE lock")] : []
    }
}

/// A foreign key: recreated when its delete rule or referenced table changes.
struct AddForeignKey: SchemaChange {
    var table: String
    var foreignKey: ForeignKey
    var scansRows: Bool
    /// The source's key on the same column and referenced table, with another delete rule,
    /// that this one replaces (dropped at the step's start).
    var replacing: ForeignKey? = nil
    /// `apply --online`: the replaced key is dropped here, in the transaction that adds this
    /// one, rather than at the step's start (`OnlineArrangement`).
    var dropsReplacedKey = false

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            """
            ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: foreignKey.name) \
            FOREIGN KEY (\(ident: foreignKey.column)) REFERENCES \(ident: schema, foreignKey.referencedTable) (\(ident: "_pk")) \
            ON DELETE \(unsafeRaw: foreignKey.onDelete)
            """,
            lock: .shareRowExclusive, summary: "foreign key \(table).\(foreignKey.column) -> \(foreignKey.referencedTable)"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("validating \(foreignKey.name) reads every row of \(table)")] : []
    }
}

/// A uniqueness constraint: `UNIQUE` on a root entity, a partial unique index on a sub-entity.
struct AddUnique: SchemaChange {
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

struct DropUnique: SchemaChange {
    var table: String
    var unique: UniqueConstraint

    func statements(in schema: String) -> [PlannedStatement] {
        if unique.entityScope != nil {
            return DropIndex(table: table, name: unique.name).statements(in: schema)
        }
        return DropConstraint(table: table, name: unique.name).statements(in: schema)
    }
}

/// A fetch index, or the index of a foreign-key column.
struct CreateIndex: SchemaChange {
    var table: String
    var index: IndexLayout
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "CREATE INDEX \(ident: index.name) ON \(ident: schema, table) (\(idents: index.columns))",
            lock: .share, summary: "index \(table) (\(index.columns.joined(separator: ", ")))"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("building \(index.name) reads every row of \(table); writes to \(table) wait meanwhile")] : []
    }
}

struct DropIndex: SchemaChange {
    var table: String
    var name: String
    /// An index over a column the destination does not have: dropping the column drops it too,
    /// which `apply --online` leaves to that drop (a moved column is read until the switch-over).
    var goesWithItsColumn = false

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement("DROP INDEX \(ident: schema, name)", lock: .accessExclusive, summary: "drop index \(name) on \(table)")]
    }
}
