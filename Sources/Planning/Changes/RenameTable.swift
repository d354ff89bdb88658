import SQLBuilding

/// A table continued under another name: an entity hierarchy whose root was renamed (or gained
/// a new root), or a join table named after a renamed entity or relationship. Its primary key
/// and identity sequence follow, named as PostgreSQL would name them for the new table.
struct RenameTable: SchemaChange {
    var kind: ChangeKind { .renameTable(self) }
    var from: String
    var to: String
    var hasIdentity: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        // Each rename is a catalog change under ACCESS EXCLUSIVE.
        func rename(_ sql: SQL, _ summary: String) -> PlannedStatement {
            PlannedStatement(sql, lock: .accessExclusive, summary: summary)
        }
        var statements = [
            rename("ALTER TABLE \(ident: schema, from) RENAME TO \(ident: to)", "rename table \(from) -> \(to)"),
            rename(
                "ALTER TABLE \(ident: schema, to) RENAME CONSTRAINT \(ident: ImplicitNames.primaryKey(table: from)) TO \(ident: ImplicitNames.primaryKey(table: to))",
                "rename primary key of \(to)"
            ),
        ]
        if hasIdentity {
            let sequence = (from: ImplicitNames.identitySequence(table: from, column: "_pk"), to: ImplicitNames.identitySequence(table: to, column: "_pk"))
            statements.append(rename("ALTER SEQUENCE \(ident: schema, sequence.from) RENAME TO \(ident: sequence.to)", "rename identity sequence of \(to)"))
        }
        return statements
    }
}

extension RenameTable: InstantChange {}
