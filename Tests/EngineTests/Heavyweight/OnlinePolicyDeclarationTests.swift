import Testing
@testable import Engine

/// What `apply --online` reads of a policy comes from `OnlineEntityMigrationPolicy` alone: a
/// policy conforming to `EntityMigrationPolicy` only declares nothing, whatever members it has.
@Suite struct OnlinePolicyDeclarationTests {
    final class Plain: EntityMigrationPolicy {}

    final class PerInstance: OnlineEntityMigrationPolicy {
        var declaredHooks: Set<PolicyHook>? { [.createDestinationInstances, .function] }
    }

    final class PerRound: OnlineEntityMigrationPolicy {
        var declaredHooks: Set<PolicyHook>? { [.createDestinationInstances, .endInstanceCreation] }
        var runsWholeMappingHooksPerCatchUpRound: Bool { true }
    }

    /// Conforms, and keeps both defaults.
    final class Undeclared: OnlineEntityMigrationPolicy {}

    @Test("the registry reads hooks and per-round runs only from online policies, and their defaults declare nothing")
    func declarationsComeFromTheOnlineProtocol() {
        let registry = PolicyRegistry()
        registry.register("Plain") { Plain() }
        registry.register("PerInstance") { PerInstance() }
        registry.register("PerRound") { PerRound() }
        registry.register("Undeclared") { Undeclared() }

        #expect(registry.declaredHooks == [
            "PerInstance": [.createDestinationInstances, .function],
            "PerRound": [.createDestinationInstances, .endInstanceCreation],
        ])
        #expect(registry.perRoundPolicies == ["PerRound"])
        #expect(Undeclared().declaredHooks == nil && !Undeclared().runsWholeMappingHooksPerCatchUpRound)
    }
}
