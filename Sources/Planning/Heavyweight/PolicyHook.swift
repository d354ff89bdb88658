/// The hooks of a custom entity migration policy (`EntityMigrationPolicy` in the engine), by
/// name. A policy declares those it implements so that `apply --online` knows whether the rows
/// written meanwhile can be mapped again through it, or its entity mapping must run again whole
/// under the write guard (docs/online-migrations.md).
public enum PolicyHook: String, Sendable, Hashable, CaseIterable, Comparable {
    case begin
    case createDestinationInstances
    case endInstanceCreation
    case createRelationships
    case endRelationshipCreation
    case performCustomValidation
    case end
    case function

    /// Runs once over the whole entity mapping in stage 1 or 2, so it cannot run again for
    /// some rows only. (`performCustomValidation` and `end` run once in stage 3, which an online
    /// step runs after the last catch-up round, over every row, as offline.)
    public var isWholeMapping: Bool { [.begin, .endInstanceCreation, .endRelationshipCreation].contains(self) }

    public static func < (lhs: PolicyHook, rhs: PolicyHook) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
