import Foundation
import Testing
import ObjectModel
import SQLBuilding
@testable import Planning

/// A data pre-check of a step: the rows that would break it, named.
/// The change: Planning/Changes/DataCheck.swift.
@Suite struct DataCheckTests {
    @Test func aDataCheckNarrowedToLinkedRowsNamesTheLinkedTable() throws {
        let check = DataCheck(
            table: "recipe", offending: "true", problem: "rows of recipe (100% linked)", hint: "relink them",
            linkingTo: ("chef_pk", "chef", ["Chef", "O'Chef"])
        )
        let text = try #require(check.statements(in: "s").first).sql.text
        #expect(text.contains(#"FROM (SELECT "_pk" FROM "s"."recipe" WHERE true AND "chef_pk" IN (SELECT "_pk" FROM "s"."chef" WHERE "_entity" IN ('Chef', 'O''Chef'))) AS r;"#))
        #expect(text.contains("MESSAGE = format('%s rows of recipe (100%% linked); first _pk: %s', offending, first_keys),"))
        #expect(text.hasPrefix("DO $check$\nDECLARE\n") && text.hasSuffix("END IF;\nEND\n$check$"))
    }
}
