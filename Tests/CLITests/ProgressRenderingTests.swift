import Engine
import Foundation
@testable import OrchestratorCLI
import Testing

/// Fixed progress events to exact text and JSON: no clock, no terminal.
@Suite("progress rendering")
struct ProgressRenderingTests {
    /// Step 1 of 2, pass 3 of 7: a quarter of a million rows done in 2.5 s (100000 rows/s, 7.5 s left).
    static let rows = ProgressEvent(
        kind: .rows, step: 1, stepCount: 2, stepKind: "heavyweight", from: "Recipes 1", to: "Recipes 2", pass: 3,
        passCount: 7, stage: .pass(.createInstances), entityMapping: "RecipeToRecipe", execution: .streaming,
        rowsDone: 250_000, rowsTotal: 1_000_000, elapsedSeconds: 2.5
    )
    static let passPrefix = "step 1 of 2: heavyweight 'Recipes 1' -> 'Recipes 2' pass 3 of 7 createInstances RecipeToRecipe (streaming)"

    static func event(_ kind: ProgressEvent.Kind, rowsDone: Int, rowsTotal: Int? = 1_000_000, elapsedSeconds: Double, resumed: Bool = false) -> ProgressEvent {
        var event = rows
        event.kind = kind
        event.rowsDone = rowsDone
        event.rowsTotal = rowsTotal
        event.elapsedSeconds = elapsedSeconds
        event.resumed = resumed
        return event
    }

    @Test("plain lines name the step, the pass, its stage and entity mapping, rows, rate and ETA", arguments: [
        (rows, "\(passPrefix): 250000 of 1000000 rows, 100000 rows/s, ETA 8 s"),
        (event(.rows, rowsDone: 250_000, rowsTotal: nil, elapsedSeconds: 2.5), "\(passPrefix): 250000 rows, 100000 rows/s, ETA unknown"),
        (event(.rows, rowsDone: 0, elapsedSeconds: 0.5), "\(passPrefix): 0 of 1000000 rows, rate unknown, ETA unknown"),
        (event(.passStarted, rowsDone: 0, elapsedSeconds: 0), "\(passPrefix): started, 1000000 rows expected"),
        (event(.passStarted, rowsDone: 0, rowsTotal: nil, elapsedSeconds: 0), "\(passPrefix): started"),
        (event(.passFinished, rowsDone: 1_000_000, elapsedSeconds: 10.2), "\(passPrefix): done, 1000000 rows in 10.2 s (98039 rows/s)"),
        (event(.passFinished, rowsDone: 0, elapsedSeconds: 0.003, resumed: true), "\(passPrefix): done by an earlier run (resumed)"),
        (event(.stepFinished, rowsDone: 1, elapsedSeconds: 75.4), "step 1 of 2: heavyweight 'Recipes 1' -> 'Recipes 2': done, 1 row in 1 min 15 s"),
    ])
    func plainLines(event: ProgressEvent, expected: String) {
        #expect(ProgressRendering.line(event) == expected)
    }

    @Test("a step without passes prints one line when it is done, and none when it starts (apply's step line says that)")
    func stepWithoutPasses() {
        var started = ProgressEvent(
            kind: .stepStarted, step: 1, stepCount: 1, stepKind: "create", from: nil, to: "Recipes 3", pass: 1, passCount: 1,
            stage: .step
        )
        #expect(ProgressRendering.line(started) == nil)
        #expect(ProgressRendering.bar(started) == nil)
        started.kind = .stepFinished
        started.elapsedSeconds = 0.04
        #expect(ProgressRendering.line(started) == "step 1 of 1: create 'Recipes 3': done, 0 rows in 40 ms")
        #expect(ProgressRendering.bar(started) == nil, "step events are plain lines even on a terminal")
    }

    @Test("a pass without entity mapping or execution names its stage alone")
    func passWithStageOnly() {
        var prepare = Self.event(.passStarted, rowsDone: 0, rowsTotal: nil, elapsedSeconds: 0)
        prepare.pass = 1
        prepare.stage = .pass(.prepare)
        prepare.entityMapping = nil
        prepare.execution = nil
        #expect(ProgressRendering.line(prepare) == "step 1 of 2: heavyweight 'Recipes 1' -> 'Recipes 2' pass 1 of 7 prepare: started")
    }

    @Test("the ETA is whole seconds rounded up, in minutes and hours when long", arguments: [
        (0.0, "ETA 0 s"), (0.2, "ETA 1 s"), (7.5, "ETA 8 s"), (125.0, "ETA 2 min 05 s"), (3720.0, "ETA 1 h 02 min"),
    ])
    func etaText(seconds: Double, expected: String) {
        #expect(ProgressRendering.etaText(seconds) == expected)
    }

    @Test("the bar shows the share done, counts, rate and ETA; a finished pass a full bar and its time", arguments: [
        (rows, "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming) [######..................]  25% 250000/1000000 rows, 100000 rows/s, ETA 8 s"),
        (event(.rows, rowsDone: 1_200_000, elapsedSeconds: 12), "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming) [########################] 100% 1200000/1000000 rows, 100000 rows/s, ETA 0 s"),
        (event(.rows, rowsDone: 250_000, rowsTotal: nil, elapsedSeconds: 2.5), "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming) 250000 rows, 100000 rows/s, ETA unknown"),
        (event(.passStarted, rowsDone: 0, elapsedSeconds: 0), "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming) [........................]   0% 0/1000000 rows, rate unknown, ETA unknown"),
        (event(.passFinished, rowsDone: 990_000, elapsedSeconds: 10.2), "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming) [########################] 100% 990000/1000000 rows, done in 10.2 s"),
        (event(.passFinished, rowsDone: 0, elapsedSeconds: 0, resumed: true), "step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming): done by an earlier run (resumed)"),
    ])
    func barLines(event: ProgressEvent, expected: String) {
        #expect(ProgressRendering.bar(event) == expected)
    }

    @Test("a JSON line holds every field of the event, then rate and ETA, and says which event it is")
    func jsonLineHoldsEveryField() throws {
        let rendered = ProgressRendering.json(Self.rows).rendered
        #expect(rendered.hasPrefix("{\"event\":\"rows\","), "the kind comes first: \(rendered)")
        #expect(!rendered.contains("\n"))
        let object = try jsonObject(rendered)
        #expect(Set(object.keys) == [
            "event", "step", "stepCount", "stepKind", "from", "to", "pass", "passCount", "stage", "part", "entityMapping",
            "execution", "rowsDone", "rowsTotal", "elapsedSeconds", "resumed", "rate", "etaSeconds",
        ])
        #expect(object["step"] as? Int == 1)
        #expect(object["stepCount"] as? Int == 2)
        #expect(object["part"] is NSNull, "no part outside stage 2")
        #expect(object["stepKind"] as? String == "heavyweight")
        #expect(object["from"] as? String == "Recipes 1")
        #expect(object["to"] as? String == "Recipes 2")
        #expect(object["pass"] as? Int == 3)
        #expect(object["passCount"] as? Int == 7)
        #expect(object["stage"] as? String == "createInstances")
        #expect(object["entityMapping"] as? String == "RecipeToRecipe")
        #expect(object["execution"] as? String == "streaming")
        #expect(object["rowsDone"] as? Int == 250_000)
        #expect(object["rowsTotal"] as? Int == 1_000_000)
        #expect(object["elapsedSeconds"] as? Double == 2.5)
        #expect(object["resumed"] as? Bool == false)
        #expect(object["rate"] as? Double == 100_000)
        #expect(object["etaSeconds"] as? Double == 7.5)
    }

    @Test("unknown values are null in a JSON line: no total, no rate, no ETA, no entity mapping")
    func jsonLineUnknowns() throws {
        let started = ProgressEvent(
            kind: .stepStarted, step: 2, stepCount: 3, stepKind: "lightweight", from: nil, to: "Recipes 3", pass: 1, passCount: 1,
            stage: .step
        )
        let object = try jsonObject(ProgressRendering.json(started).rendered)
        #expect(object["event"] as? String == "stepStarted")
        for key in ["from", "entityMapping", "execution", "rowsTotal", "rate", "etaSeconds"] {
            #expect(object[key] is NSNull, "\(key) should be null: \(object)")
        }
        #expect(object["rowsDone"] as? Int == 0)
        #expect(object["elapsedSeconds"] as? Double == 0)
    }

    @Test("seconds and rates in a JSON line are rounded to thousandths")
    func jsonLineRounding() throws {
        let object = try jsonObject(ProgressRendering.json(Self.event(.rows, rowsDone: 1, elapsedSeconds: 3)).rendered)
        #expect(object["elapsedSeconds"] as? Double == 3)
        #expect(object["rate"] as? Double == 0.333)
        #expect(object["etaSeconds"] as? Double == 2_999_997)
    }
}
