@testable import Engine
import Foundation
import ObjectModel
@testable import OrchestratorCLI
import Planning
import Testing

/// apply's output, from its own renderer: the bytes scripts read.
@Suite("apply rendering")
struct ApplyRenderingTests {
    static func report(upToDate: Bool = false) throws -> ApplyReport {
        let model = try ModelLoader.loadEachVersion(path: OrchestratorBinary.repository.appendingPathComponent("migrations").path)
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: false, metadata: nil)
        var plan = try Planner.plan(model: model, snapshot: snapshot)
        if upToDate { plan.status = .upToDate }
        let applied = upToDate ? [] : [AppliedStep(step: plan.steps[0], rows: 3, durationMilliseconds: 12)]
        return ApplyReport(plan: plan, appliedSteps: applied)
    }

    @Test("the JSON document, byte for byte")
    func json() throws {
        let report = try Self.report()
        #expect(ApplyRendering.json(report, store: "recipes").rendered == """
            {"store":"recipes","version":"Recipes 3","modelHash":"\(report.plan.targetModelHash)","wasUpToDate":false,\
            "steps":[{"kind":"create","from":null,"to":"Recipes 3","rows":3,"durationMs":12}],"backupSchema":null}
            """)
    }

    @Test("the text lines, after a step and when already up to date")
    func text() throws {
        #expect(ApplyRendering.text(try Self.report(), store: "recipes") == ["store recipes: now at 'Recipes 3' (1 step(s), 12 ms)"])
        #expect(ApplyRendering.text(try Self.report(upToDate: true), store: "recipes") == ["store recipes: already up to date at 'Recipes 3'; nothing to do"])
    }
}
