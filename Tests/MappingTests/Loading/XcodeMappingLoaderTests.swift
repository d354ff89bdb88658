import Foundation
import Testing
@testable import Mapping

@Suite struct XcodeMappingLoaderTests {
    typealias Store = XcodeMappingStore

    static let celsius: String = {
        let bytes = ExpressionArchive.bytes { archive in
            let difference = archive.builtin("from:subtract:", [archive.keyPath("source", "temperature"), archive.constant(.real(32))])
            return archive.builtin("divide:by:", [difference, archive.constant(.real(1.8))])
        }
        // Xcode wraps the base64 text over lines.
        return Data(bytes).base64EncodedString(options: .lineLength76Characters)
    }()

    /// Recipes 2 -> 3: RecipeToRecipe (filtered, an expression, a relationship through
    /// ChefToChef), ChefToChef (nothing customised), Note (removed), Tag (added), and an
    /// entity mapping the model does not list (a leftover).
    static func recipesStore(temperatureData: String = celsius) -> Store {
        let entity = "XDDEVENTITYMAPPING"
        return Store(listed: ["z3", "z2", "z4", "z9"], objects: [
            (entity, "z2", [
                Store.attribute("sourcename", "Recipe"), Store.attribute("destinationname", "Recipe"),
                Store.attribute("mappingtypename", "Undefined"), Store.attribute("mappingnumber", "1", type: "int16"),
                Store.attribute("sourcefilterpredicatestring", "amount &gt; 100"),
                Store.relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", ["z5", "z10"]),
                Store.relationship("relationshipmappings", "XDDEVRELATIONSHIPMAPPING", ["z6"]),
            ]),
            (entity, "z3", [
                Store.attribute("sourcename", "Chef"), Store.attribute("destinationname", "Chef"),
                Store.attribute("mappingnumber", "2", type: "int16"),
                Store.relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", ["z7"]),
                Store.relationship("relationshipmappings", "XDDEVRELATIONSHIPMAPPING", []),
            ]),
            (entity, "z4", [Store.attribute("sourcename", "Note"), Store.attribute("mappingnumber", "3", type: "int16")]),
            (entity, "z9", [Store.attribute("destinationname", "Tag"), Store.attribute("mappingnumber", "4", type: "int16")]),
            (entity, "z8", [Store.attribute("sourcename", "Recipe"), Store.attribute("mappingnumber", "0", type: "int16")]),
            ("XDDEVATTRIBUTEMAPPING", "z5", [
                Store.attribute("valueexpressiondata", "\n" + temperatureData + "\n", type: "binary"),
                Store.attribute("name", "temperatureC"),
            ]),
            ("XDDEVATTRIBUTEMAPPING", "z10", [Store.attribute("name", "name")]),
            ("XDDEVRELATIONSHIPMAPPING", "z6", [Store.attribute("name", "size"), Store.attribute("sourcemappingname", "ChefToChef")]),
            ("XDDEVATTRIBUTEMAPPING", "z7", [Store.attribute("name", "name")]),
        ])
    }

    func load(_ store: Store) throws -> MappingModel {
        try withTemporaryDirectory { directory in
            let package = directory + "/Recipes2To3.xcmappingmodel"
            try write(store.xml, to: package + "/xcmapping.xml")
            return try MappingModelLoader.load(path: package)
        }
    }

    func loadError(_ store: Store) throws -> (error: MappingLoadError?, package: String) {
        try withTemporaryDirectory { directory in
            let package = directory + "/Recipes2To3.xcmappingmodel"
            try write(store.xml, to: package + "/xcmapping.xml")
            return (#expect(throws: MappingLoadError.self) { try MappingModelLoader.load(path: package) }, package)
        }
    }

    @Test func entityMappingsAreReadInTheEditorsOrderWithTheirTypeDerived() throws {
        let model = try load(Self.recipesStore())
        #expect(model.source == "Recipes 2")
        #expect(model.destination == "Recipes 3")
        #expect(model.entityMappings.map(\.name) == ["RecipeToRecipe", "ChefToChef", "Note", "Tag"])
        #expect(model.entityMappings.map(\.type) == [.transform, .copy, .remove, .add])
        let recipe = model.entityMappings[0]
        #expect(recipe.filter == "amount > 100")
        #expect(recipe.attributeMappings == [
            PropertyMappingDefinition(name: "temperatureC", valueExpression: "($source.temperature - 32.0) / 1.8"),
            PropertyMappingDefinition(name: "name", valueExpression: nil),
        ])
        #expect(recipe.relationshipMappings == [PropertyMappingDefinition(
            name: "size",
            valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.#size)"#
        )])
        #expect(model.entityMappings[1].attributeMappings == [PropertyMappingDefinition(name: "name", valueExpression: nil)])
    }

    @Test func aPolicyAloneMakesATransformAndAStoredNameWins() throws {
        var store = Self.recipesStore()
        store.objects[1].body += [
            Store.attribute("migrationpolicyclassname", "ChefPolicy"), Store.attribute("name", "ChefsKept"),
        ]
        let chef = try load(store).entityMappings[1]
        #expect(chef.name == "ChefsKept")
        #expect(chef.policy == "ChefPolicy")
        #expect(chef.type == .transform)
    }

    @Test func everyUndecodableExpressionIsReportedWithFileLineEntityMappingAndProperty() throws {
        var store = Self.recipesStore(temperatureData: Data("not a property list, just text that is long enough to have a trailer".utf8).base64EncodedString())
        store.objects[6].body.append(Store.attribute("valueexpressiondata", "!!!", type: "binary"))
        let (error, package) = try loadError(store)
        #expect(error?.issues.map(\.description) == [
            "\(package):\(store.line(of: "z5")): entity mapping RecipeToRecipe, property temperatureC: cannot decode the value expression: not a binary property list (no bplist00 header)",
            "\(package):\(store.line(of: "z10")): entity mapping RecipeToRecipe, property name: cannot decode the value expression: the value expression data is not base64",
        ])
    }

    @Test func aStoreThatIsNotAMappingModelSaysWhy() throws {
        var noModel = Self.recipesStore()
        noModel.sourceModelPath = ""
        #expect(try loadError(noModel).error?.issues.first?.message == "the mapping model has no sourcemodelpath")

        var dangling = Self.recipesStore()
        dangling.listed.append("z99")
        #expect(try loadError(dangling).error?.issues.first?.message == "entitymappings refers to z99, which is not an XDDEVENTITYMAPPING object")
    }

    @Test func twoEntityMappingsWithOneNameAreAnError() throws {
        var store = Self.recipesStore()
        store.objects[1].body.append(Store.attribute("name", "RecipeToRecipe"))
        let (error, package) = try loadError(store)
        #expect(error?.description == "\(package):\(store.line(of: "z3")): entity mapping RecipeToRecipe: another entity mapping has the same name")
    }

    @Test func malformedXMLIsAnErrorWithItsLine() throws {
        try withTemporaryDirectory { directory in
            let package = directory + "/Broken.xcmappingmodel"
            try write(String(Self.recipesStore().xml.dropLast(40)), to: package + "/xcmapping.xml")
            let error = #expect(throws: MappingLoadError.self) { try MappingModelLoader.load(path: package) }
            #expect(error?.issues.first?.message.hasPrefix("malformed XML (line ") == true)
            let missing = #expect(throws: MappingLoadError.self) { try MappingModelLoader.load(path: directory + "/None.xcmappingmodel") }
            #expect(missing?.description == "\(directory)/None.xcmappingmodel: cannot read \(directory)/None.xcmappingmodel/xcmapping.xml")
        }
    }
}
