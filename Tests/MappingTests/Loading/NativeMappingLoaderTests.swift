import Testing
@testable import Mapping

@Suite struct NativeMappingLoaderTests {
    static let example = """
        source: Recipes 2          # version names
        destination: Recipes 3
        entityMappings:
          - name: RecipeToRecipe
            type: transform         # add | remove | copy | transform | custom
            source: Recipe
            destination: Recipe
            filter: "amount > 100"  # optional source filter predicate
            policy: SomePolicy      # optional custom entity migration policy
            attributes:
              temperatureC: "($source.temperature - 32.0) / 1.8"
            relationships:
              author: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)'
        """

    @Test func theIssuesExampleReadsWithEveryFieldAndExpressionsKeptAsText() throws {
        let model = try NativeMappingLoader.parse(Self.example, file: "recipes-2-to-3.yaml")
        #expect(model == MappingModel(
            source: "Recipes 2", destination: "Recipes 3",
            entityMappings: [EntityMappingDefinition(
                name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                filter: "amount > 100", policy: "SomePolicy",
                attributeMappings: [PropertyMappingDefinition(name: "temperatureC", valueExpression: "($source.temperature - 32.0) / 1.8")],
                relationshipMappings: [PropertyMappingDefinition(
                    name: "author",
                    valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#
                )]
            )],
            file: "recipes-2-to-3.yaml", generatesUnmentionedEntityMappings: true
        ))
    }

    @Test func jsonIsAcceptedAndANullExpressionMeansTheXcodeDefault() throws {
        let json = """
            {"source": "Recipes 1", "destination": "Recipes 2", "entityMappings": [
              {"name": "ChefToChef", "type": "copy", "source": "Chef", "destination": "Chef",
               "attributes": {"name": null, "rating": "$source.stars"}},
              {"name": "Tag", "type": "add", "destination": "Tag"},
              {"name": "NoteToNothing", "type": "remove", "source": "Note"}
            ]}
            """
        let model = try NativeMappingLoader.parse(json, file: "m.json")
        #expect(model.entityMappings.map(\.name) == ["ChefToChef", "Tag", "NoteToNothing"])
        #expect(model.entityMappings.map(\.type) == [.copy, .add, .remove])
        #expect(model.entityMappings[0].attributeMappings == [
            PropertyMappingDefinition(name: "name", valueExpression: nil),
            PropertyMappingDefinition(name: "rating", valueExpression: "$source.stars"),
        ])
        #expect(model.entityMappings[1].sourceEntity == nil)
        #expect(model.entityMappings[2].destinationEntity == nil)
    }

    /// Each malformed file, with the one-line message it must produce.
    static let errors: [(yaml: String, message: String)] = [
        (Self.example.replacingOccurrences(of: "    policy:", with: "    polcy:"),
         "recipes-2-to-3.yaml:9:5: entity mapping RecipeToRecipe: unknown key 'polcy' in the entity mapping (expected one of: attributes, destination, filter, name, policy, relationships, source, type)"),
        ("source: A\ndestination: B\nentityMapings: []\n",
         "recipes-2-to-3.yaml:3:1: unknown key 'entityMapings' in the mapping model (expected one of: destination, entityMappings, source)"),
        ("destination: B\nentityMappings: []\n",
         "recipes-2-to-3.yaml:1:1: the mapping model needs a 'source' version name"),
        ("source: A\nentityMappings: []\n",
         "recipes-2-to-3.yaml:1:1: the mapping model needs a 'destination' version name"),
        ("source: A\ndestination: B\n",
         "recipes-2-to-3.yaml:1:1: the mapping model needs 'entityMappings', a list of entity mappings"),
        ("source: A\ndestination: A\nentityMappings: []\n",
         "recipes-2-to-3.yaml:1:1: source and destination are the same version 'A'"),
        ("source: A\ndestination: B\nentityMappings: {RecipeToRecipe: {}}\n",
         "recipes-2-to-3.yaml:3:17: entityMappings must be a list of entity mappings"),
        ("source: A\ndestination: B\nentityMappings:\n  - RecipeToRecipe\n",
         "recipes-2-to-3.yaml:4:5: entity mapping #1: an entity mapping must be a mapping"),
        ("source: A\ndestination: B\nentityMappings:\n  - {type: add, destination: R}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping #1: needs a 'name'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: '', type: add, destination: R}\n",
         "recipes-2-to-3.yaml:4:12: entity mapping #1: 'name' is empty"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: add, destination: R}\n  - {name: R, type: remove, source: S}\n",
         "recipes-2-to-3.yaml:5:5: entity mapping R: the name is already used by the entity mapping at line 4"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: add, type: add, destination: R}\n",
         "recipes-2-to-3.yaml:4:15: duplicate key 'type'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, destination: R}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping R: needs a 'type' (add, remove, copy, transform or custom)"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: transfrom, source: R, destination: R}\n",
         "recipes-2-to-3.yaml:4:21: entity mapping R: unknown type 'transfrom' (expected add, remove, copy, transform or custom)"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: add, source: R, destination: R}\n",
         "recipes-2-to-3.yaml:4:26: entity mapping R: an add mapping creates destination instances from nothing, so it takes no 'source'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: add, filter: 'x > 1', destination: R}\n",
         "recipes-2-to-3.yaml:4:26: entity mapping R: an add mapping has no source instances to filter, so it takes no 'filter'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: add}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping R: an add mapping needs a 'destination' entity"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: remove, source: R, destination: R}\n",
         "recipes-2-to-3.yaml:4:40: entity mapping R: a remove mapping drops the source instances, so it takes no 'destination'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: remove, source: R, attributes: {a: '1'}}\n",
         "recipes-2-to-3.yaml:4:40: entity mapping R: a remove mapping drops the source instances, so it takes no 'attributes'"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: remove}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping R: a remove mapping needs a 'source' entity"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: transform, destination: R}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping R: a transform mapping needs a 'source' entity"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: custom, source: R}\n",
         "recipes-2-to-3.yaml:4:5: entity mapping R: a custom mapping needs a 'destination' entity"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: copy, source: R, destination: R, attributes: [a]}\n",
         "recipes-2-to-3.yaml:4:66: entity mapping R: 'attributes' must map each destination property to its value expression"),
        ("source: A\ndestination: B\nentityMappings:\n  - name: R\n    type: copy\n    source: R\n    destination: R\n    relationships:\n      chef: {via: ChefToChef}\n",
         "recipes-2-to-3.yaml:9:13: entity mapping R, property chef: the value expression must be a string"),
        ("source: A\ndestination: B\nentityMappings:\n  - name: R\n    type: copy\n    source: R\n    destination: R\n    attributes:\n      amount: '  '\n",
         "recipes-2-to-3.yaml:9:15: entity mapping R, property amount: the value expression is empty"),
        ("source: A\ndestination: B\nentityMappings:\n  - {name: R, type: copy, source: [R], destination: R}\n",
         "recipes-2-to-3.yaml:4:35: entity mapping R: 'source' must be a string"),
        ("",
         "recipes-2-to-3.yaml: the file is empty"),
        ("- just\n- a list\n",
         "recipes-2-to-3.yaml:1:1: the mapping model must be a mapping"),
    ]

    @Test(arguments: errors.indices)
    func eachMistakeIsReportedWithFileLineEntityMappingAndKey(index: Int) {
        let (yaml, message) = Self.errors[index]
        let issue = #expect(throws: MappingIssue.self) {
            try NativeMappingLoader.parse(yaml, file: "recipes-2-to-3.yaml")
        }
        #expect(issue?.description == message)
    }

    @Test func malformedYAMLNamesTheFile() {
        let issue = #expect(throws: MappingIssue.self) {
            try NativeMappingLoader.parse("source: A\nentityMappings: [unclosed\n", file: "m.yaml")
        }
        #expect(issue?.description.hasPrefix("m.yaml:3: malformed YAML: ") == true)
    }
}
