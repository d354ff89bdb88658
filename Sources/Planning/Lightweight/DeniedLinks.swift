import SQLBuilding

/// Moved rows that another table's key denies to delete (a denying delete rule, `RESTRICT`, or
/// a required link without inverse, `NO ACTION`): the step would fail on the key at the delete
/// of the moved rows, naming one row. The rows linking to them are counted first, so the step
/// fails naming how many and the first `_pk`s, with the store untouched (`DataCheck.raising`).
extension DeleteRows {
    /// One check per such key of the destination (names as they are at the delete).
    func deniedLinkChecks(in schema: String) -> [PlannedStatement] {
        guard !isLossy, let staying else { return [] }
        return staying.referencing.filter { ["RESTRICT", "NO ACTION"].contains($0.key.onDelete) && $0.table.kind.isHierarchy && $0.table.name != table }.map { referencing, key in
            DataCheck.raising(
                rows: """
                    SELECT \(ident: "_pk") FROM \(ident: schema, referencing.name) WHERE \(ident: key.column) IN \
                    (SELECT \(ident: "_pk") FROM \(ident: schema, table) WHERE \(ident: "_entity") IN (\(literals: entities)))
                    """,
                problem: "rows of \(referencing.name) whose \(key.column) links to rows of \(entities.joined(separator: ", ")) (moved out of \(table); its key \(key.name) denies their delete)",
                hint: "delete or relink those rows first, or write a mapping model that says what becomes of them",
                errorCode: "foreign_key_violation"
            )
        }
    }
}
