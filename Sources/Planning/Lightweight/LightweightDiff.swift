import ObjectModel

/// The changes that turn a store laid out for the source version into one laid out for the
/// destination, computed from a `LayoutPairing` and nothing else.
///
/// Changes run in phases (`Phase`): checks of the rows first, then everything that loosens or
/// removes, then renames, then additions and data moves, then what the moves read, and last
/// the constraints the destination adds, validated once the data is in place.
struct LightweightDiff {
    enum Phase: Int, Comparable {
        /// Rows that would make a later change fail stop the step before anything changes.
        case checkData
        /// Constraints and indexes that change, so nothing below trips over them.
        case dropConstraints
        /// Columns made nullable, before any value is cleared.
        case relax
        /// Links to rows of removed entities cleared, so deleting those rows cascades nowhere.
        case detachLinks
        /// Rows of removed entities, removed columns and tables: before renames and additions,
        /// so a name given up can be taken again.
        case remove
        case renameTables
        case renameColumns
        case renameConstraints
        /// `_entity` of renamed entities, while the `_entity` checks are dropped.
        case renameEntities
        /// New tables and columns, type widenings, defaults.
        case add
        /// Rows and links copied, order numbered, NULLs backfilled, values cleared.
        case fill
        /// What the copies read: columns, join tables and rows that moved.
        case dropMoved
        /// NOT NULL, checks, foreign keys, uniques and indexes as the destination has them.
        case tighten

        static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    struct ColumnKey: Hashable {
        var table: String
        var column: String
    }

    let pairing: LayoutPairing
    private(set) var changes: [(phase: Phase, change: any SchemaChange)] = []
    var problems: [String]
    /// Source columns and tables the copies read (source names).
    var consumedColumns: Set<ColumnKey> = []
    var consumedTables: Set<String> = []
    private var constraintRenames: [RenameConstraint] = []

    var schema: String { pairing.sourceLayout.schema }
    var source: ModelVersion { pairing.source }
    var destination: ModelVersion { pairing.destination }

    init(pairing: LayoutPairing) {
        self.pairing = pairing
        problems = pairing.problems
        for table in pairing.destinationLayout.tables {
            if let sourceName = pairing.sourceTableOf[table.name], let sourceTable = pairing.sourceLayout.table(named: sourceName) {
                continued(table, from: sourceTable)
            } else {
                added(table)
            }
        }
        dropUnclaimed()
        orderRenames()
    }

    /// The changes in the order they run: by phase, then as found.
    var orderedChanges: [any SchemaChange] {
        changes.enumerated().sorted { ($0.element.phase, $0.offset) < ($1.element.phase, $1.offset) }.map(\.element.change)
    }

    mutating func add(_ phase: Phase, _ change: any SchemaChange) {
        changes.append((phase, change))
    }

    static let requiredHint = "give those rows a value, or keep the property optional in this version"

    static func describe(_ role: ColumnLayout.Role) -> String {
        switch role {
        case .attribute(let entity, let name): "\(entity).\(name)"
        case .toOne(let entity, let relationship), .order(let entity, let relationship): "\(entity).\(relationship)"
        case .primaryKey: "_pk"
        case .entityName: "_entity"
        case .joinOwner, .joinTarget: "link"
        }
    }

    // MARK: Renames

    mutating func renameConstraint(_ kind: RenameConstraint.Kind, table: String, from: String, to: String) {
        guard from != to else { return }
        constraintRenames.append(RenameConstraint(kind: kind, table: table, from: from, to: to))
    }

    /// Renames of one kind ordered so that no name is taken when it is given.
    private mutating func orderRenames() {
        let tables = changes.filter { $0.phase == .renameTables }.compactMap { $0.change as? RenameTable }
        let columns = changes.filter { $0.phase == .renameColumns }.compactMap { $0.change as? RenameColumn }
        changes.removeAll { $0.phase == .renameTables || $0.phase == .renameColumns }
        guard let orderedTables = RenameOrder.sorted(tables, from: \.from, to: \.to) else {
            problems.append("tables swap names (\(tables.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")))")
            return
        }
        orderedTables.forEach { add(.renameTables, $0) }
        for table in Set(columns.map(\.table)).sorted() {
            let renames = columns.filter { $0.table == table }
            guard let ordered = RenameOrder.sorted(renames, from: \.from, to: \.to) else {
                problems.append("columns of \(table) swap names (\(renames.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")))")
                return
            }
            ordered.forEach { add(.renameColumns, $0) }
        }
        guard let constraints = RenameOrder.sorted(constraintRenames, from: \.from, to: \.to) else {
            problems.append("constraints swap names")
            return
        }
        constraints.forEach { add(.renameConstraints, $0) }
    }
}
