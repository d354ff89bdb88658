/// What a custom policy promises `apply --online` (docs/custom-policies.md, "Online"): opt in
/// by conforming to this protocol in place of `EntityMigrationPolicy`. A policy that does not
/// conform is planned as one declaring nothing: its entity mapping runs again whole under the
/// write guard, which is right for any policy, only slower for writers.
public protocol OnlineEntityMigrationPolicy: EntityMigrationPolicy {
    /// The hooks this policy implements, for `apply --online`, which maps the rows written
    /// meanwhile again by running `createDestinationInstances`, `createRelationships` and
    /// `function` for those rows only. Declaring them promises that each call depends on its
    /// own instance only (no state kept across instances) and that the instances it inserts
    /// belong to that instance alone. When the policy declares a hook that runs once over the
    /// whole entity mapping (`begin`, `endInstanceCreation`, `endRelationshipCreation`), or
    /// declares nothing (nil, the default), its entity mapping runs again whole under the write
    /// guard instead, so that those hooks see the whole mapping once, on the final data
    /// (unless `runsWholeMappingHooksPerCatchUpRound`).
    var declaredHooks: Set<PolicyHook>? { get }
    /// True promises that every hook can run again in each catch-up round over that round's
    /// instances only (`EntityMappingContext.catchUpRound` names them), the hooks over the
    /// whole entity mapping included (e.g. `endInstanceCreation` bringing a summary up to date
    /// from what the store holds), so that the entity mapping is not run again whole under the
    /// write guard. Default false.
    var runsWholeMappingHooksPerCatchUpRound: Bool { get }
}

extension OnlineEntityMigrationPolicy {
    public var declaredHooks: Set<PolicyHook>? { nil }
    public var runsWholeMappingHooksPerCatchUpRound: Bool { false }
}
