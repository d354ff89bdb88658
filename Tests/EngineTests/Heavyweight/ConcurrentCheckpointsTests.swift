@testable import Engine
import Planning
import Testing

/// Checkpoints of passes that ran at once (`apply --jobs`) each copied the other passes' tables
/// as they were before them: a resume takes from each only the tables its pass recounted.
@Suite struct ConcurrentCheckpointsTests {
    @Test("passes done out of order fold to the rows each of them counted for its own table")
    func checkpointsFoldByTheTablesTheirPassRecounted() throws {
        let prepare = Checkpoint(pass: 1, rows: 0, changesSeen: 2, tableRows: ["chef": 0, "recipe": 0, "tag": 0])
        // Passes 2 and 4 ran at the same time as pass 3, which a kill stopped.
        let chefs = Checkpoint(pass: 2, rows: 10, changesSeen: 2, tableRows: ["chef": 10, "recipe": 0, "tag": 0])
        let tags = Checkpoint(pass: 4, rows: 7, changesSeen: 3, tableRows: ["chef": 0, "recipe": 0, "tag": 7])
        let earlier = EarlierRun(hasCheckpointTable: true, fingerprints: ["f1", "f1", "f1"], checkpoints: [prepare, tags, chefs])
        let decision = try ResumeDecision.decide(staging: "s~staging", fingerprint: "f1", stagingExists: true, restart: false, earlier: earlier)
        let recounted: [Int: [String]] = [2: ["chef"], 3: ["recipe"], 4: ["tag"]]

        let last = try #require(decision.last { recounted[$0] })
        #expect(last == Checkpoint(pass: 4, rows: 7, changesSeen: 3, tableRows: ["chef": 10, "recipe": 0, "tag": 7]))
        // Taken whole, the last checkpoint would have lost the chefs.
        #expect(decision.last?.tableRows["chef"] == 0)
        // One after another, each checkpoint holds every count: the fold is the last one.
        let inTurn = Checkpoint(pass: 3, rows: 5, changesSeen: 2, tableRows: ["chef": 10, "recipe": 5, "tag": 0])
        #expect(prepare.followed(by: chefs, recounted: ["chef"]).followed(by: inTurn, recounted: ["recipe"]) == inTurn)
    }

    /// A set-based stage 1 pass into `table`, with the tables its checkpoint recounts.
    static func fill(_ mapping: String, _ table: String?) -> PlannedPass {
        var pass = PlannedPass(stage: .createInstances, entityMapping: mapping, statements: [])
        pass.tablesWritten = table.map { [$0] }
        return pass
    }

    @Test("a table one set-based pass fills alone takes its rows from the INSERT; shared or a policy's, it is counted")
    func rowsFilledAloneOnlyWhenNoOtherPassWritesTheTable() {
        let chefs = Self.fill("ChefToChef", "chef")
        let recipes = Self.fill("RecipeToRecipe", "recipe")
        #expect(HeavyweightRun.rowsFilledAlone(by: recipes, rows: 1_000_000, among: [chefs, recipes]) == ["recipe": 1_000_000])
        // Two entity mappings fill the chef table: the second must count what the first left.
        let cooks = Self.fill("CookToChef", "chef")
        #expect(HeavyweightRun.rowsFilledAlone(by: chefs, rows: 10, among: [chefs, cooks, recipes]).isEmpty)
        // A pass that may write any table (a policy's) may write this one.
        #expect(HeavyweightRun.rowsFilledAlone(by: recipes, rows: 5, among: [chefs, recipes, Self.fill("TagToTag", nil)]).isEmpty)
        // Stage 2 and 3 passes are not stage 1's: they never count as filling.
        var links = PlannedPass(stage: .createRelationships, part: .toMany, entityMapping: "RecipeToRecipe", statements: [])
        links.tablesWritten = nil
        #expect(HeavyweightRun.rowsFilledAlone(by: links, rows: 5, among: [chefs, recipes, links]).isEmpty)
        #expect(HeavyweightRun.rowsFilledAlone(by: recipes, rows: 7, among: [chefs, recipes, links]) == ["recipe": 7])
    }
}
