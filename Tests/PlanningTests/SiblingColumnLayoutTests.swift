import Testing
import ObjectModel
@testable import Planning

/// The columns of a hierarchy whose sub-entities declare the same property, a relationship
/// whose inverse names another, and a relationship that is its own inverse
/// (docs/store-format.md, "Columns of a hierarchy").
@Suite struct SiblingColumnLayoutTests {
    static func layout(_ entities: String) throws -> StoreLayout {
        let yaml = "entities:\n" + entities.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        let version = try NativeModelLoader.parseVersion(yaml, name: "v", file: "v.yaml")
        #expect(ModelValidator.validate(version).isEmpty, "\(ModelValidator.validate(version))")
        return StoreLayout(version: version, schema: "s")
    }

    static func columns(_ layout: StoreLayout, _ table: String) -> [String] {
        layout.table(named: table)?.columns.map(\.name) ?? []
    }

    @Test func declarationsOfOneShapeShareAColumnRequiredForEachEntityThatRequiresIt() throws {
        let layout = try Self.layout("""
            A: {abstract: true}
            B: {parent: A, attributes: {x: {type: string, optional: false}, rawGroupUid: binary}}
            C: {parent: A, attributes: {x: {type: uri, optional: false}, rawGroupUID: binary}}
            D: {parent: A, attributes: {x: string}}
            """)
        #expect(Self.columns(layout, "a") == ["_pk", "_entity", "x", "raw_group_uid"])
        #expect(layout.table(named: "a")?.checks.map(\.expression).last == #""_entity" NOT IN ('B', 'C') OR "x" IS NOT NULL"#)
    }

    @Test func declarationsOfOtherShapesEachGetAColumnNamedAfterTheShape() throws {
        let layout = try Self.layout("""
            Person: {}
            Team: {}
            A: {abstract: true}
            B: {parent: A, attributes: {likeCount: int32}, relationships: {owner: {destination: Person}}}
            C: {parent: A, attributes: {likeCount: string}, relationships: {owner: {destination: Team}}}
            D: {parent: A, attributes: {likeCount: int32}, relationships: {owner: {destination: Person}}}
            """)
        #expect(Self.columns(layout, "a") == ["_pk", "_entity", "like_count_integer", "owner_person_pk", "like_count_text", "owner_team_pk"])
        #expect(layout.table(named: "a")?.foreignKeys.map(\.referencedTable) == ["person", "team"])
        // D's owner has no inverse and is required: it blocks deletes where B's clears.
        let rules = try Self.layout("""
            Person: {}
            A: {abstract: true}
            B: {parent: A, relationships: {owner: {destination: Person}}}
            D: {parent: A, relationships: {owner: {destination: Person, optional: false}}}
            """)
        #expect(Self.columns(rules, "a") == ["_pk", "_entity", "owner_person_nullify_pk", "owner_person_no_action_pk"])
    }

    @Test func addingASiblingOfAShapeAlreadyPresentRenamesNothing() throws {
        let two = "A: {abstract: true}\nB: {parent: A, attributes: {n: int32}}\nC: {parent: A, attributes: {n: string}}"
        let before = try Self.layout(two)
        let after = try Self.layout("AA: {parent: A, attributes: {n: int32}}\n" + two)
        #expect(Self.columns(before, "a") == ["_pk", "_entity", "n_integer", "n_text"])
        #expect(Self.columns(after, "a") == Self.columns(before, "a"))
    }

    @Test func declarationsOfOneEntitysRowsThatMeetAreRefused() throws {
        let version = try NativeModelLoader.parseVersion("""
            entities:
              A: {attributes: {rawGroupUID: binary}}
              B: {parent: A, attributes: {rawGroupUid: binary}}
              C: {parent: A, attributes: {n: int32, nText: string}}
              D: {parent: A, attributes: {n: string}}
            """, name: "v", file: "v.yaml")
        #expect(ModelValidator.validate(version).map(\.description) == [
            "v.yaml: entity B, property rawGroupUid: maps onto column 'raw_group_uid' of table 'a', like A.rawGroupUID",
            "v.yaml: entity C, property nText: maps onto column 'n_text' of table 'a', like D.n",
        ])
    }

    @Test func aRelationshipThatIsItsOwnInverseHasOneOrderColumn() throws {
        let layout = try Self.layout("Person: {relationships: {friends: {destination: Person, inverse: friends, toMany: true, ordered: true}}}")
        #expect(Self.columns(layout, "person__friends") == ["person_pk", "friends_pk", "friends_order"])
    }

    @Test func aRelationshipWhoseInverseNamesAnotherIsStoredAsWithoutInverse() throws {
        let version = try NativeModelLoader.parseVersion("""
            entities:
              Artist: {relationships: {thumbnail: {destination: Image, inverse: thumbnailOf}}}
              Image: {relationships: {artist: {destination: Artist, inverse: thumbnail}, thumbnailOf: {destination: Artist, inverse: thumbnail}}}
            """, name: "v", file: "v.yaml")
        #expect(ModelValidator.validate(version).isEmpty)
        let warnings = ModelValidator.warnings(version)
        #expect(warnings.map(\.description) == [
            "v.yaml: entity Image, property artist: its inverse Artist.thumbnail names 'thumbnailOf' as its own inverse; stored as a relationship without an inverse [inverse-not-mutual]",
        ])
        #expect(warnings.map(\.severity) == [.warning] && warnings.map(\.code) == ["inverse-not-mutual"])
        let layout = StoreLayout(version: version, schema: "s")
        #expect(Self.columns(layout, "artist") == ["_pk", "_entity", "thumbnail_pk"])
        #expect(Self.columns(layout, "image") == ["_pk", "_entity", "artist_pk"])
        #expect(layout.table(named: "image")?.foreignKeys.first?.onDelete == "SET NULL")
    }
}
