@testable import Engine
import Planning
import Testing

/// The resume decisions of a heavyweight step over what a database would show: no database.
@Suite struct ResumeDecisionTests {
    static let staging = "recipes~staging"
    static func checkpoint(_ pass: Int, rows: [String: Int] = ["recipe": 3]) -> Checkpoint {
        Checkpoint(pass: pass, rows: pass * 10, changesSeen: 4, tableRows: rows)
    }

    static func decide(exists: Bool, restart: Bool = false, _ earlier: EarlierRun?) throws(StagingMismatch) -> ResumeDecision {
        try ResumeDecision.decide(staging: staging, fingerprint: "f1", stagingExists: exists, restart: restart, earlier: earlier)
    }

    @Test("without a staging schema the step starts afresh and skips nothing")
    func noStaging() throws {
        let decision = try Self.decide(exists: false, nil)
        #expect(decision == ResumeDecision(startsAfresh: true, done: [:]))
        #expect(decision.last == nil)
    }

    @Test("--restart starts afresh even over another plan's checkpoints")
    func restartDiscards() throws {
        let other = EarlierRun(hasCheckpointTable: true, fingerprints: ["f0"], checkpoints: [Self.checkpoint(1)])
        #expect(try Self.decide(exists: true, restart: true, other) == ResumeDecision(startsAfresh: true, done: [:]))
    }

    @Test("checkpoints of the same plan are skipped, and the last one is continued from")
    func samePlanSkipsDonePasses() throws {
        let earlier = EarlierRun(hasCheckpointTable: true, fingerprints: ["f1", "f1"], checkpoints: [Self.checkpoint(1), Self.checkpoint(2)])
        let decision = try Self.decide(exists: true, earlier)
        #expect(!decision.startsAfresh)
        #expect(decision.done.keys.sorted() == [1, 2])
        #expect(decision.last?.pass == 2)
    }

    @Test("a staging schema whose checkpoint table is empty continues from pass 1 without installing again")
    func emptyCheckpoints() throws {
        let decision = try Self.decide(exists: true, EarlierRun(hasCheckpointTable: true, fingerprints: [], checkpoints: []))
        #expect(decision == ResumeDecision(startsAfresh: false, done: [:]))
    }

    @Test("a staging schema without checkpoints, or with another plan's, stops naming the schema and --restart")
    func foreignStagingStops() {
        let none = #expect(throws: StagingMismatch.self) { try Self.decide(exists: true, EarlierRun(hasCheckpointTable: false, fingerprints: [], checkpoints: [])) }
        #expect(none?.description == "schema recipes~staging exists but holds no checkpoints of an orchestrator migration; nothing was changed (run apply with --restart to discard it and start over)")
        let other = #expect(throws: StagingMismatch.self) { try Self.decide(exists: true, EarlierRun(hasCheckpointTable: true, fingerprints: ["f1", "f0"], checkpoints: [])) }
        #expect(other?.reason == "holds passes of another migration plan of this store (the model, mapping model or options changed since)")
    }

    static func verify(untracked: [String] = [], writes: [LoggedWrites] = [], replays: Bool = false, rows: [String: Int] = ["recipe": 3]) throws(StagingMismatch) {
        try ResumeDecision.verify(
            since: checkpoint(2), store: "recipes", staging: staging, untracked: untracked, writes: writes, replaysWrites: replays,
            stagingTables: ["recipe"], stagingRows: rows
        )
    }

    @Test("a store unwritten since the checkpoint, with its triggers and staging rows as counted, is trusted")
    func untouchedIsTrusted() throws {
        try Self.verify()
    }

    @Test("removed triggers stop the resume, naming the tables")
    func removedTriggers() {
        let refusal = #expect(throws: StagingMismatch.self) { try Self.verify(untracked: ["chef", "recipe"]) }
        #expect(refusal?.reason.contains("the change triggers on recipes.chef, recipes.recipe were removed, so writes since pass 2 cannot be seen") == true)
    }

    @Test("writes since the checkpoint stop an offline resume, per table and operation; an online one replays them")
    func writesSinceCheckpoint() throws {
        let writes = [
            LoggedWrites(table: "recipe", operation: "INSERT", rows: 2, truncated: false),
            LoggedWrites(table: "recipe", operation: "DELETE", rows: 1, truncated: false),
            LoggedWrites(table: "chef", operation: "TRUNCATE", rows: -1, truncated: true),
        ]
        let refusal = #expect(throws: StagingMismatch.self) { try Self.verify(writes: writes) }
        #expect(refusal?.reason == "holds passes of recipes as it was at pass 2, and it was written since: recipes.recipe 2 row(s) inserted, 1 row(s) deleted; recipes.chef truncated")
        try Self.verify(writes: writes, replays: true)
    }

    @Test("staging rows changed by hand stop the resume, naming the table and both counts")
    func stagingChangedByHand() {
        let refusal = #expect(throws: StagingMismatch.self) { try Self.verify(rows: ["recipe": 5]) }
        #expect(refusal?.reason == "was changed outside orchestrator: recipes~staging.recipe holds 5 row(s), 3 when pass 2 was checkpointed")
    }
}
