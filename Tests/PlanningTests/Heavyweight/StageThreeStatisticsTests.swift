import Foundation
import Mapping
import ObjectModel
import Testing
@testable import Planning

/// Stage 3 reads the statistics again of the tables stage 2 wrote, and of no other: a table
/// stage 1 filled whole has its size from its primary key, built after the rows.
@Suite struct StageThreeStatisticsTests {
    typealias Kitchen = HeavyweightMigrationTests

    /// The staging tables that statements of `passes` UPDATE or INSERT INTO.
    static func written(by passes: [PlannedPass]) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"(?:UPDATE|INSERT INTO) "shop~staging"\."([^"]+)""#)
        return Set(passes.flatMap(\.statements).flatMap { statement -> [String] in
            let text = statement.sql.text
            return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
        })
    }

    /// The tables stage 3's ANALYZE names, nil without one.
    static func analyzed(in work: StagedWork) -> Set<String>? {
        let validate = work.passes.filter { $0.stage == .validate }.flatMap(\.statements)
        guard let analyze = validate.first(where: { $0.sql.text.hasPrefix("ANALYZE") }) else { return nil }
        return Set(analyze.sql.text.dropFirst("ANALYZE ".count).components(separatedBy: ", ").map {
            String($0.replacingOccurrences(of: #""shop~staging"."#, with: "").dropFirst().dropLast())
        })
    }

    @Test("stage 2 fills a join table and an inverse's column: stage 3 analyzes those two tables, not the others")
    func analyzesWhatStageTwoWrote() throws {
        let work = try #require(try ToManyLinkTests.step().staged)
        let stageTwo = Self.written(by: work.passes.filter { $0.stage == .createRelationships })
        #expect(stageTwo == ["playlist__songs", "song"])
        #expect(Self.analyzed(in: work) == stageTwo)
        // Online, the build analyzes the same tables.
        let build = try #require(work.stageThree).build.map(\.sql.text)
        #expect(build.filter { $0.hasPrefix("ANALYZE") } == [#"ANALYZE "shop~staging"."song", "shop~staging"."playlist__songs""#])
    }

    @Test("every link made in stage 1: stage 3 reads no statistics again")
    func nothingToAnalyzeWhenStageTwoWritesNothing() throws {
        let work = try #require(try Kitchen.step().staged)
        #expect(Self.written(by: work.passes.filter { $0.stage == .createRelationships }).isEmpty)
        #expect(Self.analyzed(in: work) == nil)
        #expect(!(try #require(work.stageThree)).build.contains { $0.sql.text.hasPrefix("ANALYZE") })
    }
}
