import ObjectModel

/// While a store serves two versions (`apply --expand`), the previous version's contract is its
/// views schema: one view per table of that version's layout, under the table's name, with the
/// table's columns by name. The old release finds its tables through `search_path`, so a view
/// missing falls through to the store's table of that name, in the new shape, and a column
/// missing fails its statements: both block (`status --check` exits 1). A view or column more
/// is extra, as for tables. Pure: the views' columns are read by the engine.
public enum ViewsDrift {
    /// `found`: each view of the schema with its columns, in order. Items name a view as
    /// `<views schema>.<view>`.
    public static func compare(oldVersion: ModelVersion, viewsSchema: String, found: [String: [String]]) -> [DriftItem] {
        let layout = StoreLayout(version: oldVersion, schema: viewsSchema)
        var items: [DriftItem] = []
        func place(_ view: String) -> String { "\(viewsSchema).\(view)" }
        for table in layout.tables {
            guard let columns = found[table.name] else {
                items.append(DriftItem(kind: .missing, object: .view, table: place(table.name), expected: "view of '\(oldVersion.name)'", found: nil))
                continue
            }
            let present = Set(columns)
            for column in table.columns where !present.contains(column.name) {
                items.append(DriftItem(kind: .missing, object: .column, table: place(table.name), column: column.name, expected: column.type, found: nil))
            }
            let expected = Set(table.columns.map(\.name))
            for column in columns where !expected.contains(column) {
                items.append(DriftItem(kind: .extra, object: .column, table: place(table.name), column: column, expected: nil, found: "a column of the view"))
            }
        }
        let tables = Set(layout.tables.map(\.name))
        for view in found.keys.sorted() where !tables.contains(view) {
            items.append(DriftItem(kind: .extra, object: .view, table: place(view), expected: nil, found: "a view"))
        }
        return items
    }
}

extension ViewsDrift {
    /// The store's drift while `from`'s views are served beside `to`: the columns whose drop
    /// waits for `complete` (`ExpandDeferral`) are expected, not extra.
    public static func withoutKeptColumns(_ items: [DriftItem], model: VersionedModel, from: String, to: String, store: String) -> [DriftItem] {
        guard let source = model.version(named: from), let destination = model.version(named: to),
              let mapping = MappingInference.infer(from: source, to: destination).mapping else { return items }
        let pairing = LayoutPairing(mapping: mapping, source: source, destination: destination, schema: store)
        let kept = ExpandDeferral(pairing: pairing, store: store).keptColumns
        return items.filter { item in
            !(item.kind == .extra && item.object == .column && kept.contains("\(item.table).\(item.column ?? "")"))
        }
    }
}
