import SQLBuilding

/// One change of a lightweight step, recorded as intent (names only); `statements(in:)` writes
/// its SQL. `LightweightDiff` decides which changes a step needs and in which order.
protocol SchemaChange: Sendable {
    /// What the change is, as a closed tag carrying it: read with a `switch`, never a type
    /// test. No default: a new kind of change needs its case (`ChangeKind`).
    var kind: ChangeKind { get }
    func statements(in schema: String) -> [PlannedStatement]
    var hazards: [Hazard] { get }
    /// What the change becomes under `apply --online` (its `OnlineChange` conformance, beside
    /// it in Planning/Changes/<Change>.swift). No default: a new kind of change does not compile until it has an
    /// online form, or says why it has none (`OnlineForm.refused`, with an `OnlineRefusal` code).
    func onlineForm(in schema: String) -> OnlineForm
}

extension SchemaChange {
    var hazards: [Hazard] { [] }
}

extension Hazard {
    /// Stable codes scripts can match on.
    public enum Code {
        /// Rows, or values of kept rows, are dropped: `apply` needs `--allow-data-loss`.
        public static let dataLoss = "dataLoss"
        /// The table is rewritten (a column's type changes).
        public static let tableRewrite = "tableRewrite"
        /// Every row of the table is read or written (a backfill, a new constraint validated).
        public static let fullScan = "fullScan"
        /// An ACCESS EXCLUSIVE lock is held for as long as the table takes to rewrite.
        public static let longLock = "longLock"
    }

    static func dataLoss(_ message: String) -> Hazard { Hazard(code: Code.dataLoss, message: message) }

    /// What the mapping drops, one hazard per removed entity or property: the same judgement as
    /// `InferredMapping.hasDataLoss`, whatever statements carry it out.
    static func dataLosses(of mapping: InferredMapping) -> [Hazard] {
        var hazards: [Hazard] = []
        for entity in mapping.entityMappings where entity.losesData {
            if entity.kind == .remove {
                hazards.append(.dataLoss("entity \(entity.sourceEntity!) removed: every row of it is deleted"))
                continue
            }
            let name = entity.destinationEntity ?? entity.sourceEntity!
            for property in entity.attributeMappings where property.losesData {
                hazards.append(.dataLoss("\(name).\(property.source!) removed: its values are dropped"))
            }
            for property in entity.relationshipMappings where property.losesData {
                hazards.append(.dataLoss("\(name).\(property.source!) removed: its links are dropped"))
            }
        }
        return hazards
    }
    static func tableRewrite(_ message: String) -> Hazard { Hazard(code: Code.tableRewrite, message: message) }
    static func fullScan(_ message: String) -> Hazard { Hazard(code: Code.fullScan, message: message) }
    static func longLock(_ message: String) -> Hazard { Hazard(code: Code.longLock, message: message) }

    public var isDataLoss: Bool { code == Code.dataLoss }
}
