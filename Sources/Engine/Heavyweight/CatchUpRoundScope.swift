import SQLBuilding

/// What a policy's hooks are told when they run in a catch-up round of `apply --online`
/// (`EntityMappingContext.catchUpRound`): the round maps again only the source rows written
/// meanwhile, and the hooks over the whole entity mapping of a policy that runs them per round
/// (`OnlineEntityMigrationPolicy.runsWholeMappingHooksPerCatchUpRound`) see only those.
public struct CatchUpRoundScope: Sendable {
    /// The table of the old store (`EntityMappingContext.storeSchema`) the source rows are in.
    public let sourceTable: String
    /// A subquery of the keys of the source rows the round maps again, as in
    /// `WHERE s._pk IN \(sourceKeys)` or `SELECT count(*) FROM \(sourceKeys) AS k`. Source
    /// rows deleted meanwhile are among them (their destination instances were deleted).
    public let sourceKeys: SQL
}
