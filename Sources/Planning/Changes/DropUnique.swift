import SQLBuilding

struct DropUnique: SchemaChange {
    var kind: ChangeKind { .dropUnique(self) }
    var table: String
    var unique: UniqueConstraint

    func statements(in schema: String) -> [PlannedStatement] {
        if unique.entityScope != nil {
            return DropIndex(table: table, name: unique.name).statements(in: schema)
        }
        return DropConstraint(table: table, name: unique.name).statements(in: schema)
    }
}

extension DropUnique: InstantChange {}
