import SQLBuilding

/// An index or constraint over a column whose type changes. `ALTER COLUMN … TYPE` rebuilds it
/// along with the table; `apply --online` builds it on the new column beside the old one, under
/// a temporary name, while writes go on:
/// 1. a check `NOT VALID`, then validated (SHARE UPDATE EXCLUSIVE);
/// 2. an index, a unique index `CONCURRENTLY`;
/// 3. in the swap, the old column's drop takes the old ones along, and the new ones take their
///    names: indexes renamed, a root entity's uniqueness constraint adopting its index
///    (`ADD CONSTRAINT … UNIQUE USING INDEX`, which renames it), checks renamed.
enum CoveringConstraint: Sendable, Hashable {
    case index(IndexLayout)
    case unique(UniqueConstraint)
    case check(CheckConstraint)

    var name: String {
        switch self {
        case .index(let index): index.name
        case .unique(let unique): unique.name
        case .check(let check): check.name
        }
    }

    var columns: [String] {
        switch self {
        case .index(let index): index.columns
        case .unique(let unique): unique.columns
        case .check(let check): check.kind.requiredColumn.map { [$0] } ?? []
        }
    }

    /// What covers `column` in the destination `table`.
    static func over(_ column: String, of table: TableLayout) -> [CoveringConstraint] {
        table.indexes.filter { $0.columns.contains(column) }.map(CoveringConstraint.index)
            + table.uniqueConstraints.filter { $0.columns.contains(column) }.map(CoveringConstraint.unique)
            + table.checks.filter { $0.kind.requiredColumn == column }.map(CoveringConstraint.check)
    }

    /// `orchestrator_online_covering_<digest of table and name>`: the same in every plan of the step.
    func temporaryName(on table: String) -> String {
        OnlineTrigger.prefix + "covering_" + OnlineTrigger.digest(table + "." + name)
    }

    /// Built on `shadow` in place of `column`, under the temporary name, while writes go on.
    func buildPhases(on table: String, column: String, shadow: String, in schema: String) -> [OnlinePhase] {
        let temporary = temporaryName(on: table)
        let built = columns.map { $0 == column ? shadow : $0 }
        switch self {
        case .check(let check):
            guard case .requiredFor(_, let entities) = check.kind else { preconditionFailure("check \(check.name) covers no column") }
            let expression = CheckConstraint(name: temporary, kind: .requiredFor(column: shadow, entities: entities)).expression
            return [
                .instant([PlannedStatement(
                    "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: temporary) CHECK (\(expression)) NOT VALID",
                    lock: .accessExclusive, summary: "check \(check.name) on the new \(table).\(column), for new writes"
                )]),
                validate(temporary, on: table, in: schema),
            ]
        case .index(let index):
            return [.concurrently(PlannedStatement(
                "CREATE INDEX CONCURRENTLY \(ident: temporary) ON \(ident: schema, table) (\(idents: built))",
                lock: .shareUpdateExclusive, summary: "index \(index.name) on the new \(table).\(column), concurrently"
            ), index: temporary)]
        case .unique(let unique):
            var sql: SQL = "CREATE UNIQUE INDEX CONCURRENTLY \(ident: temporary) ON \(ident: schema, table) (\(idents: built))"
            if let scope = unique.entityScope {
                sql.append(" WHERE \(ident: "_entity") IN (\(literals: scope))")
            }
            return [.concurrently(PlannedStatement(
                sql, lock: .shareUpdateExclusive, summary: "unique index \(unique.name) on the new \(table).\(column), concurrently"
            ), index: temporary)]
        }
    }

    /// In the swap, once the old column (and with it the old constraint) is dropped.
    func takeNameStatement(on table: String, in schema: String) -> PlannedStatement {
        let temporary = temporaryName(on: table)
        switch self {
        case .check:
            return PlannedStatement(
                "ALTER TABLE \(ident: schema, table) RENAME CONSTRAINT \(ident: temporary) TO \(ident: name)",
                lock: .accessExclusive, summary: "the new check takes the name \(name)"
            )
        case .unique(let unique) where unique.entityScope == nil:
            return PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: name) UNIQUE USING INDEX \(ident: temporary)",
                lock: .accessExclusive, summary: "unique \(table) (\(unique.columns.joined(separator: ", "))) using the new index"
            )
        case .index, .unique:
            return PlannedStatement(
                "ALTER INDEX \(ident: schema, temporary) RENAME TO \(ident: name)",
                lock: .accessExclusive, summary: "the new index takes the name \(name)"
            )
        }
    }
}

/// A change that builds its column anew beside the old one under `apply --online`, with the
/// indexes and constraints that cover it (`covering`).
protocol ColumnRebuild: OnlineChange {
    var table: String { get }
    var column: String { get }
    var covering: [CoveringConstraint] { get set }
    /// Names the change in a refusal.
    var rebuildSummary: String { get }
    /// The new column takes the old one's place only in the switch-over (the application reads
    /// the old one until then), so what the step adds over the column later would go with it.
    var swapsAtSwitchOver: Bool { get }
}

extension CoveringConstraint {
    /// The step's changes as `apply --online` plans them: a rebuilt column rebuilds only what
    /// covers it when it runs (the step adds its new indexes and constraints at its end, on the
    /// final column). Refused: a rebuild whose index or constraint also covers another column
    /// the step rebuilds (each swap would drop the other's rebuilt index), and one swapped in at
    /// the switch-over when the step later adds something over the column or drops it.
    static func resolving(_ changes: [any SchemaChange]) -> [any SchemaChange] {
        var later: [(position: Int, table: String, name: String, what: String, columns: [String])] = []
        for (position, change) in changes.enumerated() {
            switch change {
            case let index as CreateIndex: later.append((position, index.table, index.index.name, "index \(index.index.name)", index.index.columns))
            case let unique as AddUnique: later.append((position, unique.table, unique.unique.name, "uniqueness constraint \(unique.unique.name)", unique.unique.columns))
            case let check as AddCheck: later.append((position, check.table, check.check.name, "check \(check.check.name)", check.check.kind.requiredColumn.map { [$0] } ?? []))
            case let drop as DropColumn: later.append((position, drop.table, "", "the column's drop", [drop.column]))
            default: break
            }
        }
        let rebuilds = changes.compactMap { $0 as? any ColumnRebuild }
        return changes.enumerated().map { position, change in
            guard var rebuild = change as? any ColumnRebuild else { return change }
            let after = later.filter { $0.position > position && $0.table == rebuild.table }
            rebuild.covering.removeAll { covering in after.contains { $0.name == covering.name } }
            if rebuild.swapsAtSwitchOver, let next = after.first(where: { $0.columns.contains(rebuild.column) }) {
                return OnlineRefusal(change: rebuild, reason: "\(rebuild.rebuildSummary): \(next.what) comes later in the step, which has no online form with it yet (docs/online-migrations.md, Limits)")
            }
            let others = Set(rebuilds.filter { $0.table == rebuild.table && $0.column != rebuild.column }.map(\.column))
            let shared = rebuild.covering.filter { !others.isDisjoint(with: $0.columns) }.map(\.name)
            guard shared.isEmpty else {
                return OnlineRefusal(change: rebuild, reason: "\(rebuild.rebuildSummary): \(shared.joined(separator: ", ")) also covers another column the step rebuilds, which has no online rebuild yet (docs/online-migrations.md, Limits)")
            }
            return rebuild
        }
    }
}

/// A change whose online form is refused for a reason only the whole step shows.
struct OnlineRefusal: OnlineChange {
    var change: any SchemaChange
    var reason: String

    func statements(in schema: String) -> [PlannedStatement] { change.statements(in: schema) }
    var hazards: [Hazard] { change.hazards }
    func onlineForm(in schema: String) -> OnlineForm { .refused(reason) }
}
