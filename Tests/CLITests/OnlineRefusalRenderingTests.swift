import Foundation
@testable import OrchestratorCLI
@testable import Planning
import Testing

/// `plan --online` shows each refusal's code where it shows the refusal: in the text line, and
/// in the step's `online` object as `refusalCodes` beside `refusal` (docs/cli-output.md).
@Suite("online refusal rendering")
struct OnlineRefusalRenderingTests {
    static func refusedStep() -> PlannedStep {
        let online = OnlinePlan(phases: [], refusals: [
            OnlineRefusal(.onlineUnsupportedPositionOwners, "number ingredient.position: the table of its owners is not known"),
            OnlineRefusal(.onlineUnsupportedLinkSide, "copy links from a into b.c: only a to-one column's links move online"),
        ])
        return PlannedStep(body: .phased(online), from: "v1", to: "v2", statements: [PlannedStatement("SELECT 1", lock: .none, summary: "a statement")])
    }

    @Test("the JSON of a refused step carries its codes beside its refusal")
    func json() throws {
        let rendered = OnlinePlanRendering.stepJSON(Self.refusedStep()).rendered
        let online = try #require(try JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [String: Any])
        #expect(online["supported"] as? Bool == false)
        #expect(online["refusal"] as? String == "number ingredient.position: the table of its owners is not known; copy links from a into b.c: only a to-one column's links move online")
        #expect(online["refusalCodes"] as? [String] == ["onlineUnsupportedPositionOwners", "onlineUnsupportedLinkSide"])
        let refusal = OnlineRefusal(.onlineUnsupportedUntracedPath, "entity mapping RecipeToRecipe reads $source.card, a to-one kept in no column")
        let heavyweight = PlannedStep(body: .staged(.sample(catchUpForm: .refused(refusal))), from: "v1", to: "v2", statements: [])
        let heavy = try #require(try JSONSerialization.jsonObject(with: Data(OnlinePlanRendering.heavyweightJSON(heavyweight).rendered.utf8)) as? [String: Any])
        #expect(heavy["refusalCodes"] as? [String] == ["onlineUnsupportedUntracedPath"])
    }

    @Test("the text of a refused step names each refusal's code")
    func text() {
        let plan = MigrationPlan(
            store: "s", modelName: "m", targetVersion: "v2", targetModelHash: "", currentVersion: "v2", storeVersion: "v1",
            storeModelHash: nil, storeVersionIsRecordedOnly: false, status: .migrationRequired, steps: [Self.refusedStep()], blockerDetails: []
        )
        #expect(OnlinePlanRendering.text(plan) == [
            "", "apply --online:",
            "  step 1 of 1 (lightweight 'v1' -> 'v2'): refused: [onlineUnsupportedPositionOwners] number ingredient.position: the table of its owners is not known; [onlineUnsupportedLinkSide] copy links from a into b.c: only a to-one column's links move online",
        ])
    }
}
