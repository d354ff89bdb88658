/// A step's rebuilt columns (`ColumnRebuild`) as `apply --online` plans them with the rest of
/// the step:
/// 1. a rebuild rebuilds only what covers its column when it runs: what the step adds over the
///    column later (by name) is built once, where the step adds it;
/// 2. rebuilds of one table covered together by an index or constraint (directly or through
///    one another) are swapped together (`JointSwap`): the shared index or constraint is built
///    once over all the new columns, after the last of them is filled, and takes its name in
///    their swap;
/// 3. a column swapped in at the switch-over (cleared values, or a rebuild swapped with one)
///    is the one the step's later indexes and constraints over it must cover: they are built
///    on the new column under a temporary name and take their names at the switch-over
///    (`BuiltOnRebuilt`). No later change renames or drops such a column: renames run before
///    the fills, and only columns no destination column continues are dropped after them (at
///    the switch-over, where `DropColumn` runs them).
extension CoveringConstraint {
    static func resolving(_ changes: [any SchemaChange]) -> [any SchemaChange] {
        let added = changes.enumerated().compactMap { position, change in addition(change).map { (position, $0.table, $0.constraint) } }
        var rebuilds: [Int: any ColumnRebuild] = [:]
        for (position, change) in changes.enumerated() {
            guard case .rebuild(var rebuild) = covering(change) else { continue }
            let later = Set(added.filter { $0.0 > position && $0.1 == rebuild.table }.map(\.2.name))
            rebuild.covering.removeAll { later.contains($0.name) }
            rebuilds[position] = rebuild
        }
        let groups = jointGroups(rebuilds)
        var late: [LightweightDiff.ColumnKey: Int] = [:]
        for group in groups where group.contains(where: { rebuilds[$0]!.swapsAtSwitchOver }) {
            for position in group { late[key(rebuilds[position]!)] = position }
        }
        for (position, rebuild) in rebuilds where rebuild.swapsAtSwitchOver { late[key(rebuild)] = position }

        var resolved: [any SchemaChange] = []
        for (position, change) in changes.enumerated() {
            if let rebuild = rebuilds[position] {
                guard let group = groups.first(where: { $0.contains(position) }) else {
                    resolved.append(rebuild)
                    continue
                }
                let shared = sharedCovering(group.sorted().map { rebuilds[$0]! })
                var own = rebuild
                own.covering.removeAll { shared.contains($0) }
                resolved.append(RebuildBesideOthers(rebuild: own))
                if position == group.max() {
                    let members = group.sorted().map { position in
                        var member = rebuilds[position]!
                        member.covering.removeAll { shared.contains($0) }
                        return member
                    }
                    resolved.append(JointSwap(table: rebuild.table, rebuilds: members, shared: shared))
                }
                continue
            }
            resolved.append(overRebuilt(change, at: position, late: late) ?? change)
        }
        return resolved
    }

    /// What a change is to the rebuilt columns, decided for every kind (no default).
    private enum Covering {
        /// Builds its column anew beside the old one.
        case rebuild(any ColumnRebuild)
        /// Adds over columns an index, a constraint, a NOT NULL.
        case addition(table: String, constraint: CoveringConstraint)
        case neither
    }

    private static func covering(_ change: any SchemaChange) -> Covering {
        switch change.kind {
        case .alterColumnType(let alter): .rebuild(alter)
        case .clearValues(let clear): .rebuild(clear)
        case .createIndex(let index): .addition(table: index.table, constraint: .index(index.index))
        case .addUnique(let unique): .addition(table: unique.table, constraint: .unique(unique.unique))
        case .addCheck(let check): check.check.kind.requiredColumn == nil ? .neither : .addition(table: check.table, constraint: .check(check.check))
        case .addForeignKey(let key): .addition(table: key.table, constraint: .foreignKey(key.foreignKey))
        case .setNotNull(let notNull): .addition(table: notNull.table, constraint: .notNull(column: notNull.column))
        case .addColumn, .addTable, .backfillNulls, .changeColumnDefault, .copyColumnValues, .copyRows, .dataCheck, .deleteRows,
             .detachReferences, .dropColumn, .dropConstraint, .dropIndex, .dropNotNull, .dropTables, .dropUnique, .fillJoinTable,
             .fillOrderColumn, .fillToOneColumn, .renameColumn, .renameConstraint, .renameTable, .resetIdentity, .shortestFloatText,
             .updateEntityNames:
            .neither
        case .atSwitchOver, .foreignKeyBeside, .shadowTable, .rebuildBesideOthers, .jointSwap, .builtOnRebuilt:
            .neither
        }
    }

    /// What the step adds over columns: an index, a constraint, a NOT NULL.
    private static func addition(_ change: any SchemaChange) -> (table: String, constraint: CoveringConstraint)? {
        guard case .addition(let table, let constraint) = covering(change) else { return nil }
        return (table, constraint)
    }

    private static func key(_ rebuild: any ColumnRebuild) -> LightweightDiff.ColumnKey {
        LightweightDiff.ColumnKey(table: rebuild.table, column: rebuild.column)
    }

    /// Positions of rebuilds of one table linked by an index or constraint they share,
    /// directly or through one another; groups of two or more.
    private static func jointGroups(_ rebuilds: [Int: any ColumnRebuild]) -> [Set<Int>] {
        var groups: [Set<Int>] = []
        for position in rebuilds.keys.sorted() {
            let rebuild = rebuilds[position]!
            let names = Set(rebuild.covering.map(\.name))
            let linked = groups.indices.filter { index in
                groups[index].contains { other in
                    rebuilds[other]!.table == rebuild.table && !names.isDisjoint(with: rebuilds[other]!.covering.map(\.name))
                }
            }
            let merged = linked.reduce(into: Set([position])) { $0.formUnion(groups[$1]) }
            groups = groups.indices.filter { !linked.contains($0) }.map { groups[$0] } + [merged]
        }
        return groups.filter { $0.count > 1 }
    }

    /// The indexes and constraints that cover more than one of `rebuilds`' columns.
    private static func sharedCovering(_ rebuilds: [any ColumnRebuild]) -> [CoveringConstraint] {
        let all = rebuilds.flatMap(\.covering)
        var shared: [CoveringConstraint] = []
        for covering in all where !shared.contains(covering) && all.filter({ $0.name == covering.name }).count > 1 {
            shared.append(covering)
        }
        return shared
    }

    /// An index or constraint the step adds later than the rebuild of a column swapped in at
    /// the switch-over, over that column: built on the new column; nil for any other change.
    private static func overRebuilt(_ change: any SchemaChange, at position: Int, late: [LightweightDiff.ColumnKey: Int]) -> (any SchemaChange)? {
        guard let addition = addition(change) else { return nil }
        let rebuilt = late.filter { $0.key.table == addition.table && $0.value < position }.map(\.key.column)
        guard addition.constraint.columns.contains(where: rebuilt.contains) else { return nil }
        let shadows = Dictionary(uniqueKeysWithValues: rebuilt.map { ($0, CoveringConstraint.shadow(of: $0, on: addition.table)) })
        return BuiltOnRebuilt(change: change, table: addition.table, constraint: addition.constraint, shadows: shadows)
    }
}
