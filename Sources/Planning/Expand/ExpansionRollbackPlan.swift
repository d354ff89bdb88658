import ObjectModel
import SQLBuilding

/// `orchestrator rollback`: the statements that return a store expanded from `old` to `new`
/// (`apply --expand`, not completed) to `old`, in place, and what `old` cannot hold. Pure.
///
/// 1. The step back is the lightweight step the inference finds from `new` to `old` (renames
///    are paired back by their renaming identifiers); a pair it refuses (a to-one made
///    to-many cannot go back to a to-one) refuses the rollback, with the reasons.
/// 2. The columns and tables `apply --expand` deferred to `complete` are still there, with
///    their values: the step back does not add them again (nor a kept column's key to a kept
///    table, which stays). It puts back what was relaxed on them (NULLs of a required column backfilled with its default, NOT NULL, checks, keys).
/// 3. The old version's views go first (`DROP SCHEMA … CASCADE`): they read the columns the
///    step renames and drops.
/// 4. What `old` cannot hold (`RollbackLoss`): the values of attributes and links `new` added,
///    rows of entities `new` added, values a narrowed type cannot hold. Each is counted against
///    the store before anything changes.
public struct ExpansionRollbackPlan: Sendable {
    public var from: String
    public var to: String
    public var viewsSchema: String
    public var statements: [PlannedStatement]
    public var losses: [RollbackLoss]

    public init(from new: ModelVersion, to old: ModelVersion, store: String, viewsSchema: String) throws(RollbackRefused) {
        guard let forward = MappingInference.infer(from: old, to: new).mapping else {
            throw RollbackRefused(reasons: ["[rollbackNotInferable] '\(old.name)' -> '\(new.name)' is no longer inferable: no step back can be derived from it"])
        }
        let back: InferredMapping
        switch MappingInference.infer(from: new, to: old) {
        case .refused(let refusals): throw RollbackRefused(reasons: refusals.map { "[rollbackNotInferable] '\(new.name)' -> '\(old.name)': \($0.description)" })
        case .inferable(let mapping): back = mapping
        }
        let forwardPairing = LayoutPairing(mapping: forward, source: old, destination: new, schema: store)
        let changes = LightweightDiff(pairing: forwardPairing).orderedChanges
        let rebuilt = Set(OnlinePlanner.plan(changes, schema: store).rebuiltTables)
        let deferral = ExpandDeferral(changes: changes, pairing: forwardPairing, rebuilt: rebuilt)
        let kept = KeptByExpansion(deferral: deferral, pairing: forwardPairing)

        let pairing = LayoutPairing(mapping: back, source: new, destination: old, schema: store)
        let diff = LightweightDiff(pairing: pairing)
        guard diff.problems.isEmpty else {
            throw RollbackRefused(reasons: diff.problems.map { "[rollbackNotInPlace] '\(new.name)' -> '\(old.name)' cannot run in place: \($0)" })
        }
        let steps = diff.orderedChanges.flatMap { kept.replacing($0, in: pairing.destinationLayout) }
        from = new.name
        to = old.name
        self.viewsSchema = viewsSchema
        statements = [PlannedStatement(
            "DROP SCHEMA IF EXISTS \(ident: viewsSchema) CASCADE", lock: .accessExclusive, summary: "drop the views of '\(old.name)' (\(viewsSchema))"
        )] + steps.flatMap { kept.statements(of: $0, in: store) }
        losses = RollbackLoss.losses(of: back, pairing: pairing, checks: steps, schema: store)
    }
}

/// What `apply --expand` deferred to `complete`, so still in the store: columns (under the
/// old version's table names) and tables.
struct KeptByExpansion {
    var columns: Set<LightweightDiff.ColumnKey> = []
    var tables: Set<String> = []
    /// Keys of kept columns left in place (`"table.key"`, old names): they link to a kept table.
    var keys: Set<String> = []

    init(deferral: ExpandDeferral, pairing: LayoutPairing) {
        keys = deferral.keptKeys
        for change in deferral.deferred {
            switch change.kind {
            case .dropColumn(let drop):
                columns.insert(.init(table: pairing.sourceTableOf[drop.table] ?? drop.table, column: drop.column))
            case .dropTables(let drop):
                tables.formUnion(drop.tables)
            default:
                continue
            }
        }
    }

    /// `change` of the step back, as it runs over what the expansion kept: a kept column is not
    /// added again, only made as required as it was; a kept table and its indexes are there.
    func replacing(_ change: any SchemaChange, in layout: StoreLayout) -> [any SchemaChange] {
        switch change.kind {
        case .addColumn(let add) where columns.contains(.init(table: add.table, column: add.column.name)):
            guard !add.column.isNullable else { return [] }
            let backfill = add.column.defaultExpression.map { BackfillNulls(table: add.table, column: add.column.name, value: $0, entities: nil) }
            return (backfill.map { [$0] } ?? []) + [SetNotNull(table: add.table, column: add.column.name, scansRows: true)]
        case .createIndex(let index):
            let isKept = tables.contains(index.table) || index.index.columns.allSatisfy { columns.contains(.init(table: index.table, column: $0)) }
            return isKept ? [] : [change]
        case .addTable(let add):
            return tables.contains(add.table.name) ? [] : [change]
        case .addForeignKey(let key):
            return tables.contains(key.table) || keys.contains("\(key.table).\(key.foreignKey.name)") ? [] : [change]
        default:
            return [change]
        }
    }

    /// The statements of `change`; a foreign key put back on a kept column first applies its
    /// delete rule to the links the new release left pointing at rows it deleted (the key was
    /// dropped meanwhile): cleared (SET NULL), or their rows deleted (CASCADE). A denying key
    /// has no rule to apply: its validation names the links and stops the rollback.
    func statements(of change: any SchemaChange, in schema: String) -> [PlannedStatement] {
        guard case .addForeignKey(let add) = change.kind, columns.contains(.init(table: add.table, column: add.foreignKey.column)) else {
            return change.statements(in: schema)
        }
        let key = add.foreignKey
        let dangling: SQL = """
            \(ident: key.column) IS NOT NULL AND NOT EXISTS (SELECT FROM \(ident: schema, key.referencedTable) AS referenced \
            WHERE referenced.\(ident: "_pk") = \(ident: schema, add.table).\(ident: key.column))
            """
        let repair: PlannedStatement? = switch key.onDelete {
        case "SET NULL":
            PlannedStatement(
                "UPDATE \(ident: schema, add.table) SET \(ident: key.column) = NULL WHERE \(dangling)", lock: .rowExclusive,
                summary: "clear \(add.table).\(key.column) where it links to rows deleted since apply --expand"
            )
        case "CASCADE":
            PlannedStatement(
                "DELETE FROM \(ident: schema, add.table) WHERE \(dangling)", lock: .rowExclusive,
                summary: "delete the rows of \(add.table) whose \(key.column) links to rows deleted since apply --expand (cascade)"
            )
        default:
            nil
        }
        return (repair.map { [$0] } ?? []) + change.statements(in: schema)
    }
}

/// A rollback refused before anything changes: the step back cannot be derived or run in place.
public struct RollbackRefused: Error, Sendable, CustomStringConvertible {
    public var reasons: [String]

    public init(reasons: [String]) {
        self.reasons = reasons
    }

    public var description: String {
        "rollback refused: \(reasons.joined(separator: "; ")); nothing was changed (run orchestrator complete to keep the new version)"
    }
}
