import Testing
@testable import Planning

/// Conversions that read floating-point numbers as text run online under the offline step's
/// `extra_float_digits`, whatever the sessions running them set.
/// The change: Planning/Changes/ShortestFloatText.swift.
@Suite struct ShortestFloatTextTests: OnlineStepFixtures {
    @Test func theChecksAndBatchesSetTheOfflineSettingAndTheTriggerFunctionPinsIt() throws {
        let phases = try Self.phases(
            "Recipe: {attributes: {rating: double, price: decimal}}",
            "Recipe: {attributes: {rating: decimal, price: double}}"
        )
        let setting = "SET LOCAL extra_float_digits = 1"
        let checks = phases.filter { $0.statements.contains { $0.summary.hasPrefix("check: no rows of recipe") } }
        #expect(checks.count == 2, "the misfits of both conversions are counted")
        #expect(checks.allSatisfy { $0.statements.first?.sql.text == setting })
        let batches = phases.compactMap(\.batches)
        #expect(batches.count == 2)
        #expect(batches.allSatisfy { $0.setup.map(\.text) == [setting] && $0.template.text.hasPrefix(setting + "; UPDATE ") })
        let functions = phases.flatMap(\.statements).map(\.sql.text).filter { $0.hasPrefix("CREATE OR REPLACE FUNCTION") }
        #expect(functions.count == 2)
        #expect(functions.allSatisfy { $0.contains("RETURNS trigger LANGUAGE plpgsql SET extra_float_digits = 1 AS $online$") })
        #expect(phases.filter { $0.hold == .instant }.allSatisfy { !$0.statements.contains { $0.sql.text == setting } }, "catalog changes read no rows")
    }

    @Test func aWideningThatReadsNoTextLeavesTheSessionsSettingAlone() throws {
        let phases = try Self.phases("Recipe: {attributes: {rating: int16}}", "Recipe: {attributes: {rating: int64}}")
        #expect(phases.compactMap(\.batches).allSatisfy { $0.setup.isEmpty })
        #expect(!phases.flatMap(\.statements).contains { $0.sql.text.contains("extra_float_digits") })
    }
}
