import Testing
@testable import Planning
@testable import Engine

/// `apply --online` refuses a step it cannot run while the application writes, before anything
/// changes (`OnlineNotSupported.check` runs before the first step). No change of a real model
/// reaches a refusal any more: every lightweight change kind has an online form
/// (OnlineChangeKindsTests), every corpus pair plans online (CorpusOnlineTests), and the last
/// heavyweight refusal (a path through a one-to-one kept in the other row's column) runs online
/// (OnlineOneToOnePathTests). What is left are the planners' defensive refusals, so the rule is
/// pinned on steps that carry one.
@Suite struct OnlineRefusalTests {
    static let statement = PlannedStatement("SELECT 1", lock: .none, summary: "a statement")

    @Test func aLightweightStepIsRefusedWithItsChangesReasons() {
        var step = PlannedStep(body: .phased(OnlinePlan(phases: [], refusals: [])), from: "v1", to: "v2", statements: [Self.statement])
        step.body = .phased(OnlinePlan(phases: [], refusals: [
            OnlineRefusal(.onlineUnsupportedPositionOwners, "number link.position: the table of its owners is not known"),
            OnlineRefusal(.onlineUnsupportedLinkSide, "a second reason"),
        ]))
        #expect(OnlineNotSupported.refusal(of: step) == "number link.position: the table of its owners is not known; a second reason")
        step.body = .phased(OnlinePlan(phases: [], refusals: []))
        #expect(OnlineNotSupported.refusal(of: step) == nil)
        // Planned offline: it runs in place, and has no online form to run.
        step.body = .inPlace
        #expect(OnlineNotSupported.refusal(of: step) == "the step was planned without an online form")
        #expect(step.onlineRefusals.map(\.code) == [.onlineUnsupportedNotPlanned])
    }

    @Test func aHeavyweightStepWithoutCatchUpIsRefusedWithItsReason() {
        // A heavyweight step always carries its online form or the reason it has none.
        let refusal = OnlineRefusal(.onlineUnsupportedUntracedPath, "entity mapping RecipeToRecipe reads $source.card, kept in no column")
        let step = PlannedStep(body: .staged(.sample(catchUpForm: .refused(refusal))), from: "v1", to: "v2", statements: [Self.statement])
        #expect(step.onlineRefusals.map(\.code) == [.onlineUnsupportedUntracedPath])
        #expect(OnlineNotSupported.refusal(of: step) == "entity mapping RecipeToRecipe reads $source.card, kept in no column")
    }

    @Test func theCheckNamesEachRefusalsCode() throws {
        var step = PlannedStep(body: .phased(OnlinePlan(phases: [], refusals: [])), from: "v1", to: "v2", statements: [Self.statement])
        step.body = .phased(OnlinePlan(phases: [], refusals: [OnlineRefusal(.onlineUnsupportedLinkSide, "copy links from a into b.c: only a to-one column's links move online")]))
        var plan = MigrationPlan(
            store: "s", modelName: "m", targetVersion: "v2", targetModelHash: "", currentVersion: "v2", storeVersion: "v1",
            storeModelHash: nil, storeVersionIsRecordedOnly: false, status: .migrationRequired, steps: [step], blockerDetails: []
        )
        plan.mode = .online
        let error = #expect(throws: OnlineNotSupported.self) { try OnlineNotSupported.check(plan) }
        #expect(error?.refusals == ["step 1 of 1 (lightweight 'v1' -> 'v2'): [onlineUnsupportedLinkSide] copy links from a into b.c: only a to-one column's links move online"])
        // A plan made for plain apply runs its steps in their offline form: nothing to refuse.
        plan.mode = .offline
        try OnlineNotSupported.check(plan)
    }

    @Test func creatingAStoreIsNeverRefused() {
        #expect(OnlineNotSupported.refusal(of: PlannedStep(body: .create, from: nil, to: "v1", statements: [Self.statement])) == nil)
    }

    @Test func theErrorNamesEveryRefusedStepAndSaysNothingChanged() {
        let error = OnlineNotSupported(refusals: ["step 2 of 3 (lightweight 'v2' -> 'v3'): a reason"])
        #expect(error.description == "apply --online cannot run step 2 of 3 (lightweight 'v2' -> 'v3'): a reason; nothing was changed (run without --online to migrate with the store locked for the step's whole length)")
    }
}
