import Testing
@testable import Planning

/// A table filled with explicit keys continues its identity after the largest; online, at the
/// switch-over, once no row can arrive through the mirroring trigger.
/// The change: Planning/Changes/ResetIdentity.swift.
@Suite struct ResetIdentityTests: RuleRows, OnlineStepFixtures {
    static let setval = #"SELECT setval(pg_get_serial_sequence('"s"."dog"', '_pk'), COALESCE((SELECT max("_pk") FROM "s"."dog"), 0) + 1, false)"#

    @Test func offlineTheIdentityContinuesRightAfterTheRowsAreCopied() throws {
        let sql = try LightweightFixtures.sql(Self.dogLeavesAnimals.0, Self.dogLeavesAnimals.1)
        let copy = try #require(sql.firstIndex { $0.hasPrefix(#"INSERT INTO "s"."dog""#) })
        #expect(sql.filter { $0 == Self.setval }.count == 1)
        #expect(sql.firstIndex(of: Self.setval) == copy + 1)
    }

    @Test func onlineTheIdentityContinuesAtTheSwitchOverOnceTheMirroringTriggersAreGone() throws {
        let sql = Self.sql(try Self.phases(Self.dogLeavesAnimals.0, Self.dogLeavesAnimals.1))
        let reset = try #require(sql.firstIndex(of: Self.setval))
        #expect(sql.filter { $0 == Self.setval }.count == 1)
        let lastTriggerDropped = try #require(sql.lastIndex { $0.hasPrefix("DROP TRIGGER") })
        let copies = sql.indices.filter { sql[$0].hasPrefix(#"INSERT INTO "s"."dog""#) }
        #expect(!copies.isEmpty && copies.allSatisfy { $0 < reset })
        #expect(reset > lastTriggerDropped, "no row may arrive through a trigger after the identity is reset")
    }
}
