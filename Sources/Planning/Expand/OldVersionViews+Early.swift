import ObjectModel
import SQLBuilding

extension OldVersionViews {
    /// The old version's schema as `apply --expand` creates it before the first rename
    /// (`ExpandPlanning.viewsBeforeRenames`), over `layout`, the old version's tables as they
    /// still are then:
    /// - a plain view of each table, its old columns (PostgreSQL writes through it, the table's
    ///   defaults, identity and the online triggers included);
    /// - for a table whose entities are renamed, whose `_entity` the step rewrites before the
    ///   switch-over: that plain view under another name (`rowsViewName`), and the old table's
    ///   view over it reading `_entity` with the old names, with a trigger writing through the
    ///   plain view (whose columns keep their old names whatever the renames), the old
    ///   defaults and the table's identity as its columns' defaults.
    func early(layout: StoreLayout) -> [SQL] {
        var statements: [SQL] = [
            "CREATE SCHEMA \(ident: schema)",
            "COMMENT ON SCHEMA \(ident: schema) IS \(literal: "orchestrator: version \(version) of store \(store), views of its tables until the switch-over")",
        ]
        for table in layout.tables {
            let plain: SQL = "SELECT \(idents: table.columns.map(\.name)) FROM \(ident: store, table.name)"
            let renames = views.first { $0.name == table.name }?.columns.lazy.compactMap { column -> [EntityRename]? in
                guard case .entityName(let renames) = column.source, !renames.isEmpty else { return nil }
                return renames
            }.first
            guard let renames else {
                statements.append("CREATE VIEW \(ident: schema, table.name) AS \(plain)")
                continue
            }
            let rows = Self.rowsViewName(of: table.name)
            statements.append("CREATE VIEW \(ident: schema, rows) AS \(plain)")
            let columns = table.columns.map { column in
                ViewColumn(
                    name: column.name, type: column.type, defaultValue: column.defaultExpression,
                    source: column.role == .entityName ? .entityName(renames: renames) : .column(column.name, newType: column.type, required: nil)
                )
            }
            let view = OldTableView(name: table.name, base: rows, columns: columns, keys: ["_pk"], entities: nil, appendedPositions: [], hasIdentity: false)
            statements += view.statements(viewSchema: schema, storeSchema: schema)
            // The identity's sequence as a constant (regclass): it follows the table's renames.
            statements.append("""
                DO $early$BEGIN EXECUTE format('ALTER VIEW %s ALTER COLUMN "_pk" SET DEFAULT nextval(%L::regclass)', \
                \(nameLiteral: schema, table.name), pg_get_serial_sequence(\(nameLiteral: store, table.name), '_pk')); END$early$
                """)
        }
        return statements
    }

    /// The plain view under the old table's view, while entities are renamed.
    static func rowsViewName(of table: String) -> String {
        StoreNaming.shortened(table + "~rows")
    }
}
