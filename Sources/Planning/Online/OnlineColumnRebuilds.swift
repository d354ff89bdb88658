import SQLBuilding

/// A change that builds its column anew beside the old one under `apply --online`
/// (`orchestrator_online_new_<digest>`), with the indexes and constraints that cover it
/// (`covering`), and swaps it in:
/// 1. `fillingPhases`: the new column added, a trigger keeping it right in the rows written,
///    batches filling the rows already there;
/// 2. what covers it built on it (`CoveringConstraint`), then `checkingPhases`;
/// 3. the swap: the trigger goes, the old column is dropped, the new one takes its name, and
///    so does what covers it. A widening swaps at once in one short transaction; cleared values
///    swap at the switch-over (the application reads the old column until then).
protocol ColumnRebuild: OnlineChange {
    var table: String { get }
    var column: String { get }
    var covering: [CoveringConstraint] { get set }
    /// Names the change in a refusal.
    var rebuildSummary: String { get }
    /// The new column takes the old one's place only in the switch-over (the application reads
    /// the old one until then), so what the step adds over the column later is built on it.
    var swapsAtSwitchOver: Bool { get }
    var trigger: OnlineTrigger { get }
    func fillingPhases(in schema: String) -> [OnlinePhase]
    /// Once what covers the column is built, before the swap.
    func checkingPhases(in schema: String) -> [OnlinePhase]
    /// The old column dropped and the new one renamed (not the trigger's drop, nor the names
    /// of what covers it).
    func swapStatements(in schema: String) -> [PlannedStatement]
    /// The swap's phase, when it has one of its own.
    var swapSummary: String { get }
}

extension ColumnRebuild {
    var shadow: String { CoveringConstraint.shadow(of: column, on: table) }

    /// Up to the swap: the new column filled, what covers it built, checked.
    func phasesBeforeSwap(in schema: String) -> [OnlinePhase] {
        fillingPhases(in: schema)
            + covering.flatMap { $0.buildPhases(on: table, shadows: [column: shadow], in: schema) }
            + checkingPhases(in: schema)
    }

    /// The swap with the names of what covers the column.
    func swap(in schema: String) -> [PlannedStatement] {
        swapStatements(in: schema) + covering.flatMap { $0.takeNameStatements(on: table, in: schema) }
    }

    func onlineForm(in schema: String) -> OnlineForm {
        if swapsAtSwitchOver { return .phasesThenAtSwitchOver(phasesBeforeSwap(in: schema), swap(in: schema)) }
        var switchOver = OnlinePhase.instant(trigger.dropStatements(in: schema) + swap(in: schema), summary: swapSummary)
        switchOver.removes = [trigger]
        return .phases(phasesBeforeSwap(in: schema) + [switchOver])
    }
}

/// A rebuilt column that shares an index or constraint with other columns the step rebuilds
/// on the same table: it is filled and checked where the step rebuilds it, and swapped in
/// with the others by their `JointSwap`.
struct RebuildBesideOthers: OnlineChange {
    var kind: ChangeKind { .rebuildBesideOthers(self) }

    /// Without the shared indexes and constraints, which the joint swap builds.
    var rebuild: any ColumnRebuild

    func statements(in schema: String) -> [PlannedStatement] { rebuild.statements(in: schema) }
    var hazards: [Hazard] { rebuild.hazards }
    func onlineForm(in schema: String) -> OnlineForm { .phases(rebuild.phasesBeforeSwap(in: schema)) }
}

/// Columns of one table rebuilt beside the old ones and covered together by an index or a
/// constraint (`shared`), placed after the last of them: the shared ones are built over all
/// the new columns, then every column is swapped in one short transaction, in which the shared
/// ones take their names. At the switch-over when any of the columns swaps there.
struct JointSwap: OnlineChange {
    var kind: ChangeKind { .jointSwap(self) }
    var table: String
    var rebuilds: [any ColumnRebuild]
    var shared: [CoveringConstraint]

    var swapsAtSwitchOver: Bool { rebuilds.contains(where: \.swapsAtSwitchOver) }

    /// The members' own statements stay theirs.
    func statements(in schema: String) -> [PlannedStatement] { [] }

    func onlineForm(in schema: String) -> OnlineForm {
        let shadows = Dictionary(uniqueKeysWithValues: rebuilds.map { ($0.column, $0.shadow) })
        let builds = shared.flatMap { $0.buildPhases(on: table, shadows: shadows, in: schema) }
        let swap = rebuilds.flatMap { $0.swap(in: schema) } + shared.flatMap { $0.takeNameStatements(on: table, in: schema) }
        if swapsAtSwitchOver { return .phasesThenAtSwitchOver(builds, swap) }
        let triggers = rebuilds.map(\.trigger)
        var switchOver = OnlinePhase.instant(
            triggers.flatMap { $0.dropStatements(in: schema) } + swap,
            summary: "switch \(rebuilds.map { "\(table).\($0.column)" }.joined(separator: ", ")) over together: drop the triggers and the old columns, rename the new ones"
        )
        switchOver.removes = triggers
        return .phases(builds + [switchOver])
    }
}

/// An index or constraint the step adds, later than a rebuild, over a column swapped in at
/// the switch-over: built on the new column where the step adds it, under the temporary
/// name; it takes its name at the switch-over, after the swap.
struct BuiltOnRebuilt: OnlineChange {
    var kind: ChangeKind { .builtOnRebuilt(self) }
    var change: any SchemaChange
    var table: String
    var constraint: CoveringConstraint
    /// The columns swapped in at the switch-over, and the new columns beside them.
    var shadows: [String: String]

    func statements(in schema: String) -> [PlannedStatement] { change.statements(in: schema) }
    var hazards: [Hazard] { change.hazards }

    func onlineForm(in schema: String) -> OnlineForm {
        .phasesThenAtSwitchOver(
            constraint.buildPhases(on: table, shadows: shadows, in: schema),
            constraint.takeNameStatements(on: table, in: schema)
        )
    }
}
