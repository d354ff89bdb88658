import SQLBuilding

/// Values of some entities' rows copied from one column of their table into another: a column
/// sibling entities shared is split when their declarations diverge, or columns are merged
/// when they agree again (docs/store-format.md). The type cast is one the inferred mapping
/// allowed (the same type, or a lossless widening).
struct CopyColumnValues: SchemaChange {
    var table: String
    var column: String
    /// The destination column's SQL type, from `ColumnTypes`.
    var type: String
    var from: String
    var entities: [String]

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "UPDATE \(ident: schema, table) SET \(ident: column) = \(ident: from)::\(unsafeRaw: type) WHERE \(ident: "_entity") IN (\(literals: entities))",
            lock: .rowExclusive, summary: "copy \(table).\(from) into \(table).\(column) for rows of \(entities.joined(separator: ", "))"
        )]
    }

    var hazards: [Hazard] {
        [.fullScan("copies \(table).\(from) into \(table).\(column) in the rows of \(entities.joined(separator: ", "))")]
    }
}
