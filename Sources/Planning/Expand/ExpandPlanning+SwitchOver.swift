import SQLBuilding

extension ExpandPlanning {
    /// When the renames stay in their phases (a backfill follows one), or entities are renamed
    /// (their rows' `_entity` is rewritten in batches before the switch-over), the old
    /// version's schema is created before the first such phase (`OldVersionViews.early`): a
    /// view of each old table, its columns under their old names, over the table as it is then
    /// (still at the old version). A view follows its table and columns through a rename
    /// (PostgreSQL keeps their identity, not their name); so the old release, its `search_path`
    /// naming the schema first, never meets a half-renamed store. The switch-over replaces
    /// these views by the translating ones, in its transaction.
    ///
    /// Only when no phase drops a column or table, changes a column's type, swaps a column or
    /// rebuilds a table (the view would hold the old one, or stop the drop): then the old
    /// release meets the renames, as docs/rolling-deploys.md says. True when the phase was added.
    static func viewsBeforeRenames(_ online: inout OnlinePlan, layout: StoreLayout, views: OldVersionViews) -> Bool {
        guard let first = online.phases.firstIndex(where: { phase in
            phase.statements.contains { $0.sql.text.contains(" RENAME ") || $0.sql.text.contains(#"NEW."_entity" := CASE"#) }
        }) else { return false }
        let reshapes = online.phases.contains { phase in
            !phase.removes.isEmpty || phase.statements.contains { statement in
                let text = statement.sql.text
                return text.contains(" DROP COLUMN ") || text.contains("DROP TABLE ") || text.contains(" TYPE ")
            }
        }
        guard online.rebuiltTables.isEmpty, !reshapes else { return false }
        let statements = views.early(layout: layout).map { PlannedStatement($0, lock: .accessShare, summary: "serve '\(views.version)' in \(views.schema)") }
        online.phases.insert(.instant(statements, summary: "serve '\(views.version)' in \(views.schema) before the renames: views of its tables as they are"), at: first)
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
