import ObjectModel
import SQLBuilding

/// `orchestrator rollback` of a lightweight `apply --expand` stopped before its switch-over
/// (docs/rolling-deploys-rollback.md): some of its phases ran in place, the store's metadata
/// still says the old version, and no expansion is recorded. Pure: planned from the two
/// versions and the store's catalog as it is, in two parts, so that whichever phases ran (each
/// is one transaction, or batches of rows) the store ends at the old version's layout.
///
/// Part 1 (`init`), over the tables and columns:
/// 1. the plain views of the old version a run makes before its renames (`"<store>@<old>"`);
/// 2. the run's triggers, by their functions (`CASCADE`, wherever their table is now), and
///    their log tables;
/// 3. what the new version adds and the run made: columns, then tables (their values and rows
///    counted first when the new release may have written them: `RollbackLoss`, needing
///    `--allow-data-loss`; those the run filled from the old version's data are not counted);
/// 4. tables and columns renamed back (a name the new version gives, the old one not there);
/// 5. rows whose `_entity` the run renamed get the old name back; rows of entities the old
///    version does not have are counted and deleted.
/// Part 2 (`constraints`), over the catalog as part 1 left it: the constraints, indexes,
/// `NOT NULL`s and defaults of the old version's contract, put back where they differ. A
/// constraint or index of neither version (the team's own) is left as it is.
///
/// Refused before anything changes (`[rollbackUnfinishedNotUndoable]`): a step with a change
/// that destroys data before its switch-over (rows moved or deleted, values cleared, a
/// column's type changed or rebuilt), named; the engine also refuses when the store does not
/// match the old version's contract afterwards (nothing changed then either).
public struct UnfinishedExpandRollbackPlan: Sendable {
    public var from: String
    public var to: String
    public var viewsSchema: String
    public var statements: [PlannedStatement]
    public var losses: [RollbackLoss]
    /// Names of the new version's tables: an index or constraint named so is the run's.
    var newNames: Set<String>

    public init(from new: ModelVersion, to old: ModelVersion, store: String, found: SchemaCatalog, triggers: [OnlineTrigger]) throws(RollbackRefused) {
        let (pairing, deferral) = try Self.step(from: new, to: old, store: store)
        from = new.name
        to = old.name
        viewsSchema = OldVersionViews.schemaName(store: store, version: old.name)
        let layout = pairing.destinationLayout
        var names: Set<String> = []
        for table in layout.tables {
            names.formUnion(table.foreignKeys.map(\.name))
            names.formUnion(table.checks.map(\.name))
            names.formUnion(table.indexes.map(\.name))
            names.formUnion(table.uniqueConstraints.map(\.name))
            names.insert(ImplicitNames.primaryKey(table: table.name))
        }
        newNames = names
        var statements = [PlannedStatement("DROP SCHEMA IF EXISTS \(ident: viewsSchema) CASCADE", lock: .accessExclusive, summary: "drop the plain views of '\(old.name)' made before the renames")]
        var seen: Set<String> = []
        for trigger in triggers where seen.insert(trigger.name).inserted {
            statements.append(PlannedStatement("DROP FUNCTION IF EXISTS \(ident: store, trigger.name)() CASCADE", lock: .accessExclusive, summary: "drop trigger \(trigger.name) with its function"))
            if let log = trigger.log { statements.append(PlannedStatement("DROP TABLE IF EXISTS \(ident: store, log)", lock: .accessExclusive, summary: "drop log table \(log)")) }
        }
        var losses: [RollbackLoss] = []
        let filled = Self.filled(by: deferral.kept)
        var renames: [PlannedStatement] = []
        var tableRenames: [PlannedStatement] = []
        var entityNames: [PlannedStatement] = []
        var tableDrops: [PlannedStatement] = []
        for table in found.tables {
            // The online forms' own tables (a log, the owners of ordered links): the run's.
            if Self.isOnlineObject(table.name) {
                statements.append(PlannedStatement("DROP TABLE \(ident: store, table.name)", lock: .accessExclusive, summary: "drop table \(table.name) (the run's)"))
                continue
            }
            let sameName = layout.table(named: table.name)
            let source = sameName.flatMap { pairing.sourceTableOf[$0.name] }
            // A table of the new layout continuing none of the old one: the run added it.
            if let destination = sameName, source == nil, pairing.sourceLayout.table(named: table.name) == nil {
                if !filled.contains(table.name) {
                    let code: RollbackLoss.Code = destination.kind.isHierarchy ? .rollbackDropsRows : .rollbackDropsLinks
                    losses.append(RollbackLoss(
                        code: code, message: "rows of \(table.name) (a table '\(old.name)' does not have) are dropped",
                        counting: "SELECT count(*) AS rows FROM \(ident: store, table.name)"
                    ))
                }
                // After the columns: a column the run added may link to it.
                tableDrops.append(PlannedStatement("DROP TABLE \(ident: store, table.name)", lock: .accessExclusive, summary: "drop table \(table.name) (not in '\(old.name)')"))
                continue
            }
            // A table of the old layout, under its new name or its old one.
            guard let oldName = source ?? pairing.sourceLayout.table(named: table.name)?.name,
                  let oldTable = pairing.sourceLayout.table(named: oldName) else { continue }
            let isRenamed = oldName != table.name && found.table(named: oldName) == nil
            guard isRenamed || oldName == table.name else { continue }
            // The new layout's table continuing it, whatever its name now.
            let destination = (source != nil ? sameName : nil) ?? layout.tables.first { pairing.sourceTableOf[$0.name] == oldName }
            let columnsOf = destination.flatMap { pairing.sourceColumnOf[$0.name] } ?? [:]
            for column in table.columns where oldTable.column(named: column.name) == nil || columnsOf[column.name].map({ $0 != column.name }) == true {
                if let oldColumn = columnsOf[column.name], oldColumn != column.name, !table.columns.contains(where: { $0.name == oldColumn }) {
                    renames += RenameColumn(table: table.name, from: column.name, to: oldColumn).statements(in: store)
                } else if Self.isOnlineObject(column.name) {
                    statements.append(PlannedStatement(
                        "ALTER TABLE \(ident: store, table.name) DROP COLUMN \(ident: column.name)", lock: .accessExclusive, summary: "drop column \(table.name).\(column.name) (the run's)"
                    ))
                } else if let added = destination?.column(named: column.name), columnsOf[column.name] == nil, oldTable.column(named: column.name) == nil {
                    if !filled.contains("\(table.name).\(column.name)") {
                        var condition: SQL = "\(ident: column.name) IS NOT NULL"
                        if let value = added.defaultExpression { condition.append(" AND \(ident: column.name) IS DISTINCT FROM \(value)") }
                        losses.append(RollbackLoss(
                            code: .rollbackDropsValues, message: "\(table.name).\(column.name) (not in '\(old.name)'): its values are dropped",
                            counting: "SELECT count(*) AS rows FROM \(ident: store, table.name) WHERE \(condition)"
                        ))
                    }
                    statements.append(PlannedStatement(
                        "ALTER TABLE \(ident: store, table.name) DROP COLUMN \(ident: column.name)", lock: .accessExclusive,
                        summary: "drop column \(table.name).\(column.name) (not in '\(old.name)')"
                    ))
                }
            }
            if isRenamed {
                tableRenames += RenameTable(from: table.name, to: oldName, hasIdentity: table.columns.contains { $0.identity != nil }).statements(in: store)
            }
            // `_entity` back to the old names, then rows of entities the old version does not have.
            let renamed = destination.map { Self.entityRenames(in: $0, pairing: pairing) } ?? []
            if !renamed.isEmpty {
                // Its checks list the entities by name: they go first, part 2 puts the old ones back.
                let checks = Set(oldTable.checks.map(\.name)).union(destination?.checks.map(\.name) ?? [])
                for check in table.checks where checks.contains(check.name) || Self.isOnlineObject(check.name) {
                    entityNames.append(PlannedStatement(
                        "ALTER TABLE \(ident: store, oldName) DROP CONSTRAINT \(ident: check.name)", lock: .accessExclusive, summary: "drop check \(check.name) on \(oldName)"
                    ))
                }
                entityNames += UpdateEntityNames(table: oldName, renames: renamed.map { ($0.to, $0.from) }).statements(in: store)
            }
            let known = oldTable.entities + renamed.map(\.to)
            // Only where the new version puts entities the old one does not have.
            if oldTable.kind.isHierarchy, destination?.entities.contains(where: { !known.contains($0) }) == true {
                let unknown: SQL = "\(ident: "_entity") NOT IN (\(literals: known))"
                losses.append(RollbackLoss(
                    code: .rollbackDropsRows, message: "rows of \(oldName) of entities '\(old.name)' does not have are deleted",
                    counting: "SELECT count(*) AS rows FROM \(ident: store, table.name) WHERE \(unknown)"
                ))
                entityNames.append(PlannedStatement(
                    "DELETE FROM \(ident: store, oldName) WHERE \(ident: "_entity") NOT IN (\(literals: oldTable.entities))", lock: .rowExclusive,
                    summary: "delete the rows of \(oldName) of entities '\(old.name)' does not have"
                ))
            }
        }
        self.statements = statements + tableDrops + renames + tableRenames + entityNames
        self.losses = losses
    }

    /// Why `rollback` refuses a run of the step `old` -> `new` stopped before its switch-over,
    /// whatever it left (`status` says so without reading the store); empty when it does not.
    public static func refusals(from new: ModelVersion, to old: ModelVersion, store: String) -> [String] {
        do {
            _ = try step(from: new, to: old, store: store)
            return []
        } catch {
            return error.reasons
        }
    }

    /// The step's pairing and what `apply --expand` keeps of it, or the refusal: no inferable
    /// step, or a change that cannot be undone.
    private static func step(from new: ModelVersion, to old: ModelVersion, store: String) throws(RollbackRefused) -> (LayoutPairing, ExpandDeferral) {
        guard let forward = MappingInference.infer(from: old, to: new).mapping else {
            throw RollbackRefused(reasons: ["[rollbackNotInferable] '\(old.name)' -> '\(new.name)' is no longer inferable: no step back can be derived from it"])
        }
        let pairing = LayoutPairing(mapping: forward, source: old, destination: new, schema: store)
        let deferral = ExpandDeferral(pairing: pairing, store: store)
        let undoable = (deferral.relaxing + deferral.kept).compactMap { notUndoable($0, store: store) }
        guard undoable.isEmpty else { throw RollbackRefused(reasons: undoable) }
        return (pairing, deferral)
    }

    /// Whether `name` is one of the objects `apply --online` makes for itself (triggers, their
    /// functions and tables, checks standing for a `NOT NULL`), which nothing else's is named as.
    static func isOnlineObject(_ name: String) -> Bool {
        name.hasPrefix(OnlineTrigger.prefix) || name.hasPrefix(OnlineTrigger.firstPrefix)
    }

    /// The entities of `table` (new layout) whose name the step changed: old -> new.
    static func entityRenames(in table: TableLayout, pairing: LayoutPairing) -> [(from: String, to: String)] {
        pairing.mapping.entityMappings.compactMap { mapping in
            guard let source = mapping.sourceEntity, let destination = mapping.destinationEntity, source != destination,
                  table.entities.contains(destination), !mapping.sourceIsAbstract else { return nil }
            return (source, destination)
        }
    }

    /// Tables (`name`) and columns (`table.column`) the step fills from the old version's data:
    /// the new release wrote nothing there that the old version lacks.
    static func filled(by changes: [any SchemaChange]) -> Set<String> {
        Set(changes.compactMap { change -> String? in
            switch change.kind {
            case .fillJoinTable(let fill): return fill.table
            case .fillOrderColumn(let fill): return "\(fill.table).\(fill.column)"
            case .fillToOneColumn(let fill): return "\(fill.table).\(fill.column)"
            default: return nil
            }
        })
    }
}
