/// A table or column of the store that its version's contract does not have (`status` shows it
/// as `extra` drift): the team's own, read by the engine with whether it holds anything.
public struct ExtraObject: Sendable, Hashable, CustomStringConvertible {
    public var table: String
    /// The column, for an extra column of a contract table; nil for a whole extra table.
    public var column: String?
    /// The table has rows; the column has a value other than NULL in some row.
    public var holdsRows: Bool

    public init(table: String, column: String? = nil, holdsRows: Bool) {
        self.table = table
        self.column = column
        self.holdsRows = holdsRows
    }

    public var description: String { column.map { "column \(table).\($0)" } ?? "table \(table)" }
}

extension ExtraObject {
    /// The team's objects a heavyweight step leaves in the old store when that store is then
    /// dropped (`--no-backup`, or a chain whose backup an earlier run kept): one `dataLoss`
    /// hazard for each that holds rows or values, so that `apply` takes `--allow-data-loss`
    /// for them as for the rows a mapping model leaves behind. Empty tables and columns
    /// holding only NULLs lose nothing; the step's `tableRewrite` hazard names them.
    static func hazards(of extras: [ExtraObject], store: String) -> [Hazard] {
        extras.filter(\.holdsRows).map { extra in
            let what = extra.column == nil ? "its rows are" : "its values are"
            return Hazard(
                code: Hazard.Code.dataLoss,
                message: "\(extra) of store \(store) is not in the contract (extra drift, the team's own): \(what) dropped with the old store, which is not kept (no backup)"
            )
        }
    }

    /// An online step rebuilds a table beside itself with its version's columns only
    /// (`OnlinePlan.rebuiltTables`): an extra column on it holding values goes with the old
    /// table, where the offline step keeps it. One `dataLoss` hazard each, on the first step
    /// that rebuilds its table (none after a heavyweight step, whose new store has no extras).
    static func rebuildHazards(of extras: [ExtraObject], steps: inout [PlannedStep], store: String) {
        var left = extras.filter { $0.column != nil && $0.holdsRows }
        for index in steps.indices where !left.isEmpty {
            if steps[index].kind == .heavyweight {
                left = []
                continue
            }
            let rebuilt = Set(steps[index].phases?.rebuiltTables ?? [])
            let lost = left.filter { rebuilt.contains($0.table) }
            left.removeAll { rebuilt.contains($0.table) }
            steps[index].hazards += lost.map { extra in
                Hazard(
                    code: Hazard.Code.dataLoss,
                    message: "\(extra) of store \(store) is not in the contract (extra drift, the team's own): apply --online rebuilds table \(extra.table) without it, so its values are dropped (the offline step keeps it)"
                )
            }
        }
    }

    /// The empty ones, for the step's `tableRewrite` hazard; nil when there are none.
    static func emptyNote(of extras: [ExtraObject]) -> String? {
        let empty = extras.filter { !$0.holdsRows }
        guard !empty.isEmpty else { return nil }
        return "the empty extra \(empty.map(\.description).joined(separator: ", ")) \(empty.count == 1 ? "goes" : "go") with it"
    }
}
