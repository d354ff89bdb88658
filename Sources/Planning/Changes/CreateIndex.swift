import SQLBuilding

/// A fetch index, or the index of a foreign-key column.
struct CreateIndex: SchemaChange {
    var kind: ChangeKind { .createIndex(self) }
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

extension CreateIndex: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        .phases([.concurrently(PlannedStatement(
            "CREATE INDEX CONCURRENTLY \(ident: index.name) ON \(ident: schema, table) (\(idents: index.columns))",
            lock: .shareUpdateExclusive, summary: "index \(table) (\(index.columns.joined(separator: ", "))), concurrently"
        ), index: index.name)])
    }
}
