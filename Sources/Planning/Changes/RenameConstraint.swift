import SQLBuilding

/// A kept constraint or index renamed to the name the destination layout gives it (names
/// follow table and column names), so the store keeps following the contract exactly.
struct RenameConstraint: SchemaChange {
    var kind: ChangeKind { .renameConstraint(self) }

    enum Kind: Sendable {
        /// CHECK, FOREIGN KEY and UNIQUE constraints: `ALTER TABLE … RENAME CONSTRAINT`.
        case constraint
        /// Indexes, and unique indexes scoped to sub-entities: `ALTER INDEX … RENAME`.
        case index
    }

    /// What is renamed.
    var object: Kind
    var table: String
    var from: String
    var to: String

    func statements(in schema: String) -> [PlannedStatement] {
        switch object {
        case .constraint:
            return [PlannedStatement(
                "ALTER TABLE \(ident: schema, table) RENAME CONSTRAINT \(ident: from) TO \(ident: to)",
                lock: .accessExclusive, summary: "rename constraint \(from) -> \(to) on \(table)"
            )]
        case .index:
            return [PlannedStatement(
                "ALTER INDEX \(ident: schema, from) RENAME TO \(ident: to)",
                lock: .shareUpdateExclusive, summary: "rename index \(from) -> \(to) on \(table)"
            )]
        }
    }
}

extension RenameConstraint: InstantChange {}
