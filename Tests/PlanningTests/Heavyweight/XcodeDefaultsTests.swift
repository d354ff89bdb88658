import Testing
import Mapping
import ObjectModel
@testable import Planning

/// What real `.xcmappingmodel` files need of the defaults Xcode leaves implicit (found by the
/// corpus run in EngineTests/Heavyweight/CorpusMappingTests).
@Suite struct XcodeDefaultsTests {
    static let entities = """
        Box: {attributes: {size: int64, label: string}, relationships: {first: {destination: Item}}}
        Item: {attributes: {label: string}}
        """

    static func step(_ entityMappings: [EntityMappingDefinition]) throws -> PlannedStep {
        let mapping = MappingModel(source: "Boxes 1", destination: "Boxes 2", entityMappings: entityMappings, file: "boxes.xcmappingmodel")
        typealias V = HeavyweightMigrationTests
        return try HeavyweightMigration.step(mapping: mapping, from: V.version("Boxes 1", entities), to: V.version("Boxes 2", entities), schema: "shop")
    }

    static let copies = [
        EntityMappingDefinition(name: "BoxToBox", type: .copy, sourceEntity: "Box", destinationEntity: "Box"),
        EntityMappingDefinition(name: "ItemToItem", type: .copy, sourceEntity: "Item", destinationEntity: "Item"),
    ]

    /// AltStore's `size` attributes and a relationship named `first`: `$source.size` would
    /// not parse, `$source.#size` does.
    @Test func propertiesNamedLikeReservedWordsGetEscapedDefaults() throws {
        let step = try Self.step(Self.copies)
        let insert = HeavyweightMigrationTests.sql(step, "stage 1, BoxToBox: insert Box rows with their attributes and first_pk, keeping their keys")
        #expect(insert?.contains(#"SELECT s._pk, 'Box', "s"."size", "s"."label""#) == true)
        #expect(insert?.contains(#""s"."label", "s"."first_pk""#) == true)
    }

    /// Delta 4 -> 5 keeps Xcode's blank "Mapping", which names no entity and no policy.
    @Test func aCustomMappingNamingNothingDoesNothing() throws {
        let blank = EntityMappingDefinition(name: "Mapping", type: .custom, sourceEntity: nil, destinationEntity: nil)
        let withBlank = try Self.step(Self.copies + [blank])
        #expect(withBlank.statements.map(\.sql) == (try Self.step(Self.copies)).statements.map(\.sql))
        var withPolicy = blank
        withPolicy.policy = "BlankPolicy"
        #expect(throws: HeavyweightRefusal.self) { try Self.step(Self.copies + [withPolicy]) }
    }
}
