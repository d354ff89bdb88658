import Testing
import ObjectModel
import SQLBuilding
@testable import Planning

/// Issue 21: one SHA-256 digest names a step's work, for saved plans, checkpoints and online runs.
@Suite struct StepDigestTests {
    static func statement(_ text: String) -> PlannedStatement {
        PlannedStatement(SQL(unsafeRaw: text), lock: .accessExclusive, summary: text)
    }

    static func heavyweight(swap: String = "ALTER SCHEMA \"shop\" RENAME TO \"shop~\"", copy: String = "INSERT INTO \"shop~staging\".recipe SELECT 1") -> PlannedStep {
        let passes = [PlannedPass(stage: .prepare, statements: [statement("CREATE TABLE \"shop~staging\".recipe ()")]), PlannedPass(stage: .createInstances, statements: [statement(copy)])]
        let work = StagedWork.sample(passes: passes, swap: [statement(swap)])
        return PlannedStep(body: .staged(work), from: "v1", to: "v2", statements: passes.flatMap(\.statements) + work.swap)
    }

    @Test func theDigestIsSHA256OfTheWorkAndLeavesOutWhatAnEarlierRunOrTheCatalogAdds() throws {
        let step = Self.heavyweight()
        #expect(step.digest.count == 64 && step.digest.allSatisfy(\.isHexDigit))
        var counted = step
        var work = try #require(counted.staged)
        work.passesDone = 2
        counted.body = .staged(work)
        counted.rowEstimate = 1_000_000
        counted.hazards = [Hazard(code: "dataLoss", message: "rows left behind")]
        #expect(counted.digest == step.digest)
        // --no-backup moves the old store elsewhere: the passes done are still this step's.
        #expect(Self.heavyweight(swap: "ALTER SCHEMA \"shop\" RENAME TO \"shop~retired\"").digest == step.digest)
        #expect(Self.heavyweight(copy: "INSERT INTO \"shop~staging\".recipe SELECT 2").digest != step.digest)
        var later = step
        later.to = "v3"
        #expect(later.digest != step.digest)
    }

    @Test func aHeavyweightStepStillKnowsThePreviousReleasesFingerprint() {
        let step = Self.heavyweight()
        let parts = step.passes.flatMap { pass in pass.statements.map(\.sql.text) + [""] }
        #expect(step.earlierDigests == [VersionHash.digest(of: (["v1", "v2"] + parts).joined(separator: "\u{1}"))])
        #expect(!step.earlierDigests.contains(step.digest))
    }

    @Test func aLightweightStepIsNamedByItsStatements() {
        let step = PlannedStep(body: .inPlace, from: "v1", to: "v2", statements: [Self.statement("ALTER TABLE shop.item ADD COLUMN rating smallint")])
        let other = PlannedStep(body: .inPlace, from: "v1", to: "v2", statements: [Self.statement("ALTER TABLE shop.item ADD COLUMN rating integer")])
        #expect(step.digest != other.digest)
        #expect(step.earlierDigests.isEmpty, "no online plan, no earlier identity")
    }
}
