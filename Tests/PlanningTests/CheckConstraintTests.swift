import Foundation
import Testing
import ObjectModel
import SQLBuilding
@testable import Planning

/// CHECK constraints and defaults are values: kinds and typed defaults, rendered by SQLBuilding
/// into the exact text earlier releases wrote, and compared as values by the lightweight diff.
@Suite struct CheckConstraintTests {
    @Test func kindsRenderTheNamesAndTextEarlierReleasesWrote() {
        let entities = CheckConstraint.entityIn(["Book", "O'Brien"], table: "item")
        #expect(entities.name == "item_entity_check")
        #expect(entities.expression.text == #""_entity" IN ('Book', 'O''Brien')"#)
        let required = CheckConstraint.required("isbn", for: ["Book", "Magazine"], table: "item")
        #expect(required.name == "item_isbn_required")
        #expect(required.expression.text == #""_entity" NOT IN ('Book', 'Magazine') OR "isbn" IS NOT NULL"#)
        #expect(entities.expression.binds.isEmpty && required.expression.binds.isEmpty)
        let long = String(repeating: "x", count: 70)
        #expect(CheckConstraint.required(long, for: ["A"], table: "t").name == StoreNaming.shortened("t_" + long + "_required"))
    }

    @Test func aRequiredCheckFollowsItsColumnRenamedAndIsLostWithIt() {
        let kind = CheckConstraint.Kind.requiredFor(column: "isbn", entities: ["Book"])
        #expect(kind.renamingColumns(["_entity": "_entity", "isbn": "code"]) == .requiredFor(column: "code", entities: ["Book"]))
        #expect(kind.renamingColumns(["_entity": "_entity"]) == nil)
        #expect(kind.requiredColumn == "isbn")
        #expect(CheckConstraint.Kind.entityIn(["Book"]).renamingColumns(["_entity": "_entity"]) == .entityIn(["Book"]))
        #expect(CheckConstraint.Kind.entityIn(["Book"]).requiredColumn == nil)
    }

    @Test func aChangedEntityListIsDroppedAndAddedWhileAnUnchangedRequiredCheckStays() throws {
        let source = "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: {type: string, optional: false}}}"
        let sql = try LightweightFixtures.sql(source, source + "\nCat: {parent: Animal}")
        #expect(sql.contains(#"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#))
        #expect(sql.contains(#"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal', 'Dog', 'Cat'))"#))
        #expect(!sql.contains { $0.contains("animal_bark_required") })
    }

    @Test func aRequiredCheckWhoseEntitiesChangeIsRecreated() throws {
        let source = "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: {type: string, optional: false}}}"
        let sql = try LightweightFixtures.sql(source, source + "\nCat: {parent: Animal, attributes: {bark: {type: string, optional: false}}}")
        #expect(sql.contains(#"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_bark_required""#))
        #expect(sql.contains(#"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_bark_required" CHECK ("_entity" NOT IN ('Dog', 'Cat') OR "bark" IS NOT NULL)"#))
        // Only Cat is new to the check, and it has no rows yet: nothing to count first.
        #expect(!sql.contains { $0.hasPrefix("DO ") })
    }

    @Test func defaultsRenderFromTheTypedValue() throws {
        #expect(ColumnTypes.defaultExpression(.integer(-5), type: .integer16).text == "-5")
        #expect(ColumnTypes.defaultExpression(.decimal("1.50"), type: .decimal).text == "'1.50'::numeric")
        #expect(ColumnTypes.defaultExpression(.double(1.5), type: .float).text == "'1.5'::real")
        #expect(ColumnTypes.defaultExpression(.double(1.5), type: .double).text == "'1.5'::double precision")
        #expect(ColumnTypes.defaultExpression(.string("it's"), type: .string).text == "'it''s'")
        #expect(ColumnTypes.defaultExpression(.boolean(false), type: .boolean).text == "false")
        #expect(ColumnTypes.defaultExpression(.date(Date(timeIntervalSince1970: 0)), type: .date).text == "'1970-01-01T00:00:00.000Z'::timestamptz")
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(ColumnTypes.defaultExpression(.uuid(uuid), type: .uuid).text == "'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'::uuid")
        let column = ColumnLayout(name: "n", type: "real", isNullable: true, defaultValue: .double(2), isIdentity: false, role: .primaryKey)
        #expect(column.defaultExpression?.text == "'2.0'::real")
    }
}
