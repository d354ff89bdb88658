import Foundation
import Testing
import Mapping
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21: a set-based stage 1 pass that fills its table alone runs its INSERT in parts at
/// once (`SplitInsert`, `ConcurrentPasses`); a run stopped after the parts committed and before
/// the pass's checkpoint resumes without doubling a row.
@Suite(integration) struct SplitInsertTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    struct Stopped: Error {}

    /// The kitchen's recipes and chefs after the step, every column, by key.
    static func migratedRows(on connection: PostgresConnection) throws -> [[String?]] {
        try S.rows("recipe", ["_entity", "name", "total_cost", "temperature_c", "author_pk"], on: connection)
            + S.rows("chef", ["_entity", "name"], on: connection)
    }

    static func options(jobs: Int, split: Bool, stopAfterParts: Bool = false) -> ApplyOptions {
        var options = ApplyOptions()
        options.jobs = jobs
        options.splitRowsFrom = split ? 0 : Int.max
        if stopAfterParts { options.afterParts = { _ in throw Stopped() } }
        return options
    }

    /// The rows the kitchen's step gives run whole, one pass after another.
    static func unsplit() throws -> [[String?]] {
        var rows: [[String?]] = []
        try S.withStore(try Kitchen.kitchen()) { connection in
            _ = try Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection).apply(options: options(jobs: 1, split: false))
            rows = try migratedRows(on: connection)
        }
        return rows
    }

    @Test("the kitchen's stage 1 passes fill their tables alone with the source keys: each has a split form, its parts reading ranges of blocks")
    func planningMarksTheSoleFillersSplit() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let plan = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).plan()
            let passes = try #require(plan.steps.first?.passes)
            let stageOne = passes.filter { $0.stage == .createInstances }
            #expect(stageOne.map { $0.split?.table } == ["chef", "recipe"])
            #expect(passes.filter { $0.stage != .createInstances }.allSatisfy { $0.split == nil })
            let recipes = try #require(stageOne.last)
            let split = try #require(recipes.split)
            let insert = recipes.statements[0].sql.text
            let parts = (0..<3).map { split.part($0, of: 3, blocks: 31, insert: recipes.statements[0]) }
            // Every block in one part: [0, 10), [10, 20), [20, end).
            #expect(parts.map(\.sql.text) == [
                insert + " AND s.ctid < '(10,0)'::tid",
                insert + " AND s.ctid >= '(10,0)'::tid AND s.ctid < '(20,0)'::tid",
                insert + " AND s.ctid >= '(20,0)'::tid",
            ])
            #expect(parts.allSatisfy { $0.lock == .rowExclusive })
            #expect(split.blocks.text == #"SELECT pg_relation_size('"shop"."recipe"') / current_setting('block_size')::bigint AS blocks"#)
            #expect(recipes.split?.clear.sql.text == #"TRUNCATE "shop~staging"."recipe""#)
        }
    }

    @Test("a step streamed through Swift (--streaming) has no split form")
    func aStreamedStepIsNotSplit() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var migrator = Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection)
            migrator.forceStreaming = true
            let passes = try #require(try migrator.plan().steps.first?.passes)
            #expect(passes.filter { $0.stage == .createInstances }.count == 2)
            #expect(passes.allSatisfy { $0.split == nil })
        }
    }

    @Test("run in parts, stopped after the parts committed, then resumed in parts or whole: the rows of the step run whole, none doubled", arguments: [2, 1])
    func aRunStoppedAfterItsPartsResumesWithoutDoubling(resumeJobs: Int) throws {
        let expected = try Self.unsplit()
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "amount"], on: connection)
            #expect(throws: (any Error).self) {
                try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: Self.options(jobs: 2, split: true, stopAfterParts: true))
            }
            // The parts committed on their own: the staging table holds their rows, the store is as it was.
            let staged = try connection.execute(#"""
                SELECT count(*) AS n, count(DISTINCT _pk) AS keys FROM (SELECT _pk FROM "shop~staging".chef UNION ALL SELECT -_pk FROM "shop~staging".recipe) AS t
                """#)
            #expect(staged.int(0, "n") == staged.int(0, "keys") && (staged.int(0, "n") ?? 0) > 0)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try S.rows("recipe", ["name", "amount"], on: connection) == before)

            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: Self.options(jobs: resumeJobs, split: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Self.migratedRows(on: connection) == expected)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test("run in parts without a stop: both stage 1 passes in parts, the same rows as the step run whole")
    func aSplitRunGivesTheRowsOfTheWholeRun() throws {
        let expected = try Self.unsplit()
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let split = PassNumbers()
            var options = Self.options(jobs: 2, split: true)
            options.afterParts = { split.append($0) }
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: options)
            #expect(split.numbers.sorted() == [2, 3])
            #expect(try Self.migratedRows(on: connection) == expected)
        }
    }

    final class PassNumbers: @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [Int] = []
        var numbers: [Int] { lock.withLock { recorded } }
        func append(_ number: Int) { lock.withLock { recorded.append(number) } }
    }
}
