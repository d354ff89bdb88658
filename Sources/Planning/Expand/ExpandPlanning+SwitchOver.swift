import SQLBuilding

extension ExpandPlanning {
    /// When the renames stay in their phases (a backfill follows one), the old version's
    /// schema is created before the first of them: a plain view of each old table, its columns
    /// under their old names, over the table as it is then (still at the old version). A view
    /// follows its table and columns through a rename (PostgreSQL keeps their identity, not
    /// their name), and PostgreSQL writes through it, the table's defaults, identity and the
    /// backfills' triggers included; so the old release, its `search_path` naming the schema
    /// first, never meets a half-renamed store. The switch-over replaces these views by the
    /// translating ones, in its transaction.
    ///
    /// Only when no phase drops a column or table, changes a column's type, swaps a column or
    /// rebuilds a table (the view would hold the old one, or stop the drop): then nothing is
    /// moved and the old release meets the renames, as docs/rolling-deploys.md says. True when
    /// the phase was added.
    static func viewsBeforeRenames(_ online: inout OnlinePlan, layout: StoreLayout, viewsSchema: String, version: String) -> Bool {
        guard let first = online.phases.firstIndex(where: { phase in phase.statements.contains { $0.sql.text.contains(" RENAME ") } }) else { return false }
        let reshapes = online.phases.contains { phase in
            !phase.removes.isEmpty || phase.statements.contains { statement in
                let text = statement.sql.text
                return text.contains(" DROP COLUMN ") || text.contains("DROP TABLE ") || text.contains(" TYPE ")
            }
        }
        guard online.rebuiltTables.isEmpty, !reshapes else { return false }
        var statements: [PlannedStatement] = [
            PlannedStatement("CREATE SCHEMA \(ident: viewsSchema)", lock: .none, summary: "schema \(viewsSchema)"),
            PlannedStatement(
                "COMMENT ON SCHEMA \(ident: viewsSchema) IS \(literal: "orchestrator: version \(version) of store \(layout.schema), plain views until the switch-over")",
                lock: .none, summary: "schema \(viewsSchema)"
            ),
        ]
        for table in layout.tables {
            statements.append(PlannedStatement(
                "CREATE VIEW \(ident: viewsSchema, table.name) AS SELECT \(idents: table.columns.map(\.name)) FROM \(ident: layout.schema, table.name)",
                lock: .accessShare, summary: "view \(viewsSchema).\(table.name) of \(table.name)"
            ))
        }
        online.phases.insert(.instant(statements, summary: "serve '\(version)' in \(viewsSchema) before the renames: plain views of its tables"), at: first)
        return true
    }

    /// The drops the step keeps (an order column of a relationship made unordered, a column
    /// whose name a new one takes), planned as the last phases before the switch-over, taken
    /// out to run in its transaction: until the old version's views exist, the old release
    /// names those columns in the tables themselves (`42703` otherwise).
    static func dropsAtSwitchOver(_ online: inout OnlinePlan) -> [PlannedStatement] {
        var drops: [PlannedStatement] = []
        while let last = online.phases.last, last.execution == .transaction, last.hold == .instant, last.installs.isEmpty, last.removes.isEmpty,
              last.statements.allSatisfy({ $0.sql.text.hasPrefix("ALTER TABLE ") && $0.sql.text.contains(" DROP COLUMN ") }) {
            drops.insert(contentsOf: last.statements, at: 0)
            online.phases.removeLast()
        }
        return drops
    }
}
