import Testing
@testable import Planning

/// Each way a lightweight change refuses `apply --online` carries its stable code
/// (`OnlineRefusal.Code`, docs/cli-output.md) beside its message, which names the change. No
/// change a real model pair plans reaches them any more (`CorpusOnlineTests`: every corpus pair
/// plans online), so each is pinned on the change that carries it, in that change's suite
/// (Changes/FillJoinTableTests, Changes/FillToOneColumnTests); here, a step with no online form.
@Suite struct OnlineRefusalCodesTests {
    @Test func aStepWithoutItsOnlineFormIsRefusedWithTheNotPlannedCode() {
        let statement = PlannedStatement("SELECT 1", lock: .none, summary: "a statement")
        #expect(PlannedStep(body: .inPlace, from: "v1", to: "v2", statements: [statement]).onlineRefusals.map(\.code) == [.onlineUnsupportedNotPlanned])
        #expect(PlannedStep(body: .staged(.sample()), from: "v1", to: "v2", statements: [statement]).onlineRefusals.map(\.code) == [.onlineUnsupportedUntracedPath])
        #expect(PlannedStep(body: .create, from: nil, to: "v1", statements: [statement]).onlineRefusals == [])
    }
}
