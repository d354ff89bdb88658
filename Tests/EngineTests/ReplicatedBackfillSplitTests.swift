import Planning
import SQLBuilding
import Testing
@testable import Engine

/// How `apply --subscriber` splits a lightweight step that writes published rows around the
/// publisher's (`ReplicatedBackfill.split`): added columns first, the replicated writes never,
/// the rest last; a step no order keeps fitting is refused with the stable code.
@Suite("ReplicatedBackfill.split")
struct ReplicatedBackfillSplitTests {
    static let addNote = #"ALTER TABLE "stock"."item" ADD COLUMN "note" text"#
    static let backfill = #"UPDATE "stock"."item" SET "name" = 'unnamed' WHERE "name" IS NULL"#
    static let required = #"ALTER TABLE "stock"."item" ALTER COLUMN "name" SET NOT NULL"#
    static let dropSku = #"ALTER TABLE "stock"."item" DROP COLUMN "sku""#

    static func step(_ texts: [String]) -> PlannedStep {
        PlannedStep(body: .inPlace, from: "Stock 1", to: "Stock 2", statements: texts.map { PlannedStatement(SQL(unsafeRaw: $0), lock: .accessExclusive, summary: $0) })
    }

    static func split(_ texts: [String], published: Set<String> = ["item"]) throws -> (additive: [String], replicated: [String], rest: [String])? {
        try ReplicatedBackfill.split(step(texts), store: "stock", published: published).map {
            ($0.additive.map(\.sql.text), $0.replicated.map(\.sql.text), $0.rest.map(\.sql.text))
        }
    }

    @Test("a backfill with an added and a dropped column: the column first, the backfill replicated, the drop and NOT NULL last")
    func splitsAroundTheBackfill() throws {
        let parts = try #require(try Self.split([Self.addNote, Self.backfill, Self.required, Self.dropSku]))
        #expect(parts.additive == [Self.addNote])
        #expect(parts.replicated == [Self.backfill])
        #expect(parts.rest == [Self.required, Self.dropSku])
    }

    @Test("a step writing no published row is not split", arguments: [
        [ReplicatedBackfillSplitTests.addNote, ReplicatedBackfillSplitTests.dropSku],
        [ReplicatedBackfillSplitTests.backfill],
    ])
    func notSplit(texts: [String]) throws {
        let published: Set<String> = texts.contains(Self.backfill) ? ["other"] : ["item"]
        #expect(try Self.split(texts, published: published) == nil)
    }

    @Test("a column added NOT NULL without a default is added last: rows in the old shape would not fit it")
    func requiredColumnLast() throws {
        let add = #"ALTER TABLE "stock"."item" ADD COLUMN "code" text NOT NULL"#
        let parts = try #require(try Self.split([add, Self.backfill]))
        #expect(parts.additive.isEmpty)
        #expect(parts.rest == [add])
    }

    @Test("a rename, a new table or a type change beside a backfill is refused with replicationDataWrites", arguments: [
        #"ALTER TABLE "stock"."item" RENAME COLUMN "name" TO "title""#,
        #"CREATE TABLE "stock"."tag" ("_pk" bigint)"#,
        #"ALTER TABLE "stock"."item" ALTER COLUMN "price" TYPE double precision"#,
    ])
    func unorderableRefused(text: String) throws {
        let error = #expect(throws: ReplicatedApplyRefused.self) { try Self.split([Self.backfill, text]) }
        #expect(error?.reason.hasPrefix("(replicationDataWrites) ") == true)
        #expect(error?.reason.contains(text) == true)
        #expect(error?.reason.contains("Nothing was changed") == true)
    }
}
