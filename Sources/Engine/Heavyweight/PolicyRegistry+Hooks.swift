import Planning

extension PolicyRegistry {
    /// The hooks each registered policy declares (`EntityMigrationPolicy.declaredHooks`), for
    /// planning; a policy declaring none is left out. Each policy is made once to ask.
    public var declaredHooks: [String: Set<PolicyHook>] {
        var hooks: [String: Set<PolicyHook>] = [:]
        for name in names {
            if let declared = make(name)?.declaredHooks { hooks[name] = declared }
        }
        return hooks
    }

    /// The registered policies that run their hooks over the whole entity mapping per
    /// catch-up round (`EntityMigrationPolicy.runsWholeMappingHooksPerCatchUpRound`).
    public var perRoundPolicies: Set<String> {
        Set(names.filter { make($0)?.runsWholeMappingHooksPerCatchUpRound == true })
    }
}
