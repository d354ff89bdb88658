import Planning

extension PolicyRegistry {
    /// The hooks each registered policy declares (`OnlineEntityMigrationPolicy.declaredHooks`),
    /// for planning; a policy declaring none, or not conforming, is left out. Each policy is
    /// made once to ask.
    public var declaredHooks: [String: Set<PolicyHook>] {
        var hooks: [String: Set<PolicyHook>] = [:]
        for name in names {
            if let declared = (make(name) as? any OnlineEntityMigrationPolicy)?.declaredHooks { hooks[name] = declared }
        }
        return hooks
    }

    /// The registered policies that run their hooks over the whole entity mapping per
    /// catch-up round (`OnlineEntityMigrationPolicy.runsWholeMappingHooksPerCatchUpRound`).
    public var perRoundPolicies: Set<String> {
        Set(names.filter { (make($0) as? any OnlineEntityMigrationPolicy)?.runsWholeMappingHooksPerCatchUpRound == true })
    }
}
