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
    /// The store's drift while `from`'s views are served beside `to`: what waits for `complete`
    /// (`ExpandDeferral`) belongs to `from`'s contract until then, so it is expected, not extra:
    /// the kept columns, with the indexes and the foreign keys (to kept tables) left on them,
    /// and the kept tables (a removed entity's, a removed many-to-many's).
    public static func withoutKeptColumns(_ items: [DriftItem], model: VersionedModel, from: String, to: String, store: String) -> [DriftItem] {
        guard let source = model.version(named: from), let destination = model.version(named: to),
              let mapping = MappingInference.infer(from: source, to: destination).mapping else { return items }
        let pairing = LayoutPairing(mapping: mapping, source: source, destination: destination, schema: store)
        let deferral = ExpandDeferral(pairing: pairing, store: store)
        let kept = deferral.keptColumns, tables = deferral.keptTables
        // The names of the kept columns' indexes and keys, by the table's current name.
        var onKept: Set<String> = []
        for table in pairing.sourceLayout.tables {
            let current = pairing.currentName(ofSourceTable: table.name)
            let names = table.indexes.filter { $0.columns.allSatisfy { kept.contains("\(current).\($0)") } }.map(\.name)
                + table.foreignKeys.filter { kept.contains("\(current).\($0.column)") }.map(\.name)
            onKept.formUnion(names.map { "\(current).\($0)" })
        }
        return items.filter { item in
            guard item.kind == .extra else { return true }
            switch item.object {
            case .table: return !tables.contains(item.table)
            case .column: return !kept.contains("\(item.table).\(item.column ?? "")")
            case .index, .foreignKey: return !onKept.contains("\(item.table).\(item.name ?? "")")
            default: return true
            }
        }
    }
}
