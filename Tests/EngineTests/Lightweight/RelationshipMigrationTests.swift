import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Relationships added, removed, renamed, made to-many, ordered or unordered, made required,
/// given another delete rule, on a store holding rows.
/// Proves Planning/Changes: AddColumn, AddForeignKey, CreateIndex, DropColumn, RenameColumn,
/// RenameConstraint, DropConstraint, DropNotNull, SetNotNull, DataCheck, AddTable, DropTables,
/// RenameTable, FillJoinTable, FillOrderColumn, FillToOneColumn.
@Suite(integration) struct RelationshipMigrationTests {
    typealias S = MigratedStore

    static func chefAndRecipes(recipe: String = "destination: Chef, inverse: recipes", chef: String = "destination: Recipe, inverse: chef, toMany: true") -> String {
        S.version("Recipe: {attributes: {name: string}, relationships: {chef: {\(recipe)}}}\nChef: {attributes: {name: string}, relationships: {recipes: {\(chef)}}}")
    }

    static let manyToMany = S.version("""
        Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
        Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
        """)

    @Test func addingAToOneKeepsEveryRowUnlinked() throws {
        let model = try S.model([("v1", S.version("Recipe: {attributes: {name: string}}\nChef: {attributes: {name: string}}")), ("v2", Self.chefAndRecipes())])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name", "chef_pk"], on: connection) == before.map { $0 + [nil] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func removingAToOneDropsItsLinksOnlyWithConsent() throws {
        let model = try S.model([("v1", Self.chefAndRecipes()), ("v2", S.version("Recipe: {attributes: {name: string}}\nChef: {attributes: {name: string}}"))])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("recipe", ["name"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func renamingAToOneKeepsItsLinksUnderTheNewName() throws {
        let model = try S.model([
            ("v1", Self.chefAndRecipes()),
            ("v2", S.version("Recipe: {attributes: {name: string}, relationships: {cook: {destination: Chef, inverse: recipes, renamingIdentifier: chef}}}\nChef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cook, toMany: true}}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "chef_pk"], on: connection)
            #expect(before.contains { $0[2] != nil })
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name", "cook_pk"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aNewDeleteRuleActsOnTheKeptLinks() throws {
        let model = try S.model([("v1", Self.chefAndRecipes()), ("v2", Self.chefAndRecipes(chef: "destination: Recipe, inverse: chef, toMany: true, deleteRule: cascade"))])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["chef_pk"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["chef_pk"], on: connection) == before)
            let chef = try #require(before.first { $0[1] != nil }?[1])
            try connection.execute("DELETE FROM shop.chef WHERE _pk = \(unsafeRaw: chef)")
            #expect(try S.rows("recipe", ["chef_pk"], on: connection) == before.filter { $0[1] != chef })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAToOneRequiredStopsBeforeAnyChangeWhileRowsLackTheLink() throws {
        let model = try S.model([("v1", Self.chefAndRecipes()), ("v2", Self.chefAndRecipes(recipe: "destination: Chef, inverse: recipes, optional: false"))])
        try S.withStore(model) { connection in
            let unlinked = try S.rows("recipe", ["chef_pk"], where: "chef_pk IS NULL", on: connection).map { $0[0]! }
            #expect(unlinked.count > 10)
            let failure = #expect(throws: StepFailure.self) { try S.migrate(model, on: connection) }
            let message = (failure?.underlying as? PostgresError)?.message
            #expect(message == "\(unlinked.count) rows of recipe without chef_pk (Recipe.chef made required); first _pk: \(unlinked.prefix(5).joined(separator: ", "))")
            #expect(failure?.statement?.summary.hasPrefix("check: no rows of recipe without chef_pk") == true)
            #expect(try S.version(on: connection) == "v1")
            #expect(try columns(in: S.store, table: "recipe", on: connection).first { $0.name == "chef_pk" }?.isNullable == true)

            // Once every recipe has a chef, the migration runs.
            try connection.execute("UPDATE shop.recipe SET chef_pk = (SELECT min(_pk) FROM shop.chef) WHERE chef_pk IS NULL")
            let linked = try S.rows("recipe", ["chef_pk"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["chef_pk"], on: connection) == linked)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func addingAndRemovingAManyToManyCreatesAndDropsItsJoinTable() throws {
        let plain = S.version("Recipe: {attributes: {name: string}}\nTag: {attributes: {label: string}}")
        let adding = try S.model([("v1", plain), ("v2", Self.manyToMany)])
        try S.withStore(adding) { connection in
            try S.migrate(adding, on: connection)
            #expect(try rowCount(schema: S.store, table: "recipe__tags", on: connection) == 0)
            try S.expectFollowsContract(adding, on: connection)
        }
        let removing = try S.model([("v1", Self.manyToMany), ("v2", plain)])
        try S.withStore(removing) { connection in
            let before = try S.rows("tag", ["label"], on: connection)
            try S.migrate(removing, allowDataLoss: true, on: connection)
            #expect(try !tableExists(schema: S.store, table: "recipe__tags", on: connection))
            #expect(try S.rows("tag", ["label"], on: connection) == before)
            try S.expectFollowsContract(removing, on: connection)
        }
    }

    @Test func makingAToOneToManyMovesEveryLinkIntoTheJoinTableInOrder() throws {
        let model = try S.model([
            ("v1", Self.chefAndRecipes(chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true")),
            ("v2", Self.chefAndRecipes(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true")),
        ])
        try S.withStore(model) { connection in
            let links = try connection.execute("SELECT chef_pk, _pk, chef_order FROM shop.recipe WHERE chef_pk IS NOT NULL ORDER BY 1, 2").rows
            #expect(links.count > 200)
            let report = try S.migrate(model, on: connection)
            #expect(report.appliedSteps.first?.step.hazards.filter(\.isDataLoss) == [])
            #expect(try connection.execute("SELECT chef_pk, recipes_pk, recipes_order FROM shop.chef__recipes ORDER BY 1, 2").rows == links)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAOneToManyOrderedNumbersEachOwnersRowsByPk() throws {
        let model = try S.model([("v1", Self.chefAndRecipes()), ("v2", Self.chefAndRecipes(chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"))])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["chef_pk"], on: connection)
            try S.migrate(model, on: connection)
            var seen: [String: Int] = [:]
            let expected = before.map { row -> [String?] in
                guard let chef = row[1] else { return row + [nil] }
                defer { seen[chef, default: 0] += 1 }
                return row + [String(seen[chef, default: 0])]
            }
            #expect(try S.rows("recipe", ["chef_pk", "chef_order"], on: connection) == expected)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAToManyUnorderedKeepsTheLinks() throws {
        let model = try S.model([("v1", Self.chefAndRecipes(chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true")), ("v2", Self.chefAndRecipes())])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "chef_pk"], on: connection)
            let report = try S.migrate(model, on: connection)
            #expect(report.appliedSteps.first?.step.hazards.filter(\.isDataLoss) == [])
            #expect(try S.rows("recipe", ["name", "chef_pk"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAManyToManyOrderedNumbersEachOwnersLinks() throws {
        let model = try S.model([
            ("v1", Self.manyToMany),
            ("v2", S.version("""
                Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let before = try connection.execute("SELECT recipe_pk, tags_pk FROM shop.recipe__tags ORDER BY 1, 2").rows
            try S.migrate(model, on: connection)
            var seen: [String: Int] = [:]
            let expected = before.map { row -> [String?] in
                defer { seen[row[0]!, default: 0] += 1 }
                return row + [String(seen[row[0]!, default: 0])]
            }
            #expect(try connection.execute("SELECT recipe_pk, tags_pk, tags_order FROM shop.recipe__tags ORDER BY 1, 2").rows == expected)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aRenameThatChangesTheOwnerOfAManyToManyKeepsEveryLink() throws {
        let model = try S.model([
            ("v1", Self.manyToMany),
            ("v2", S.version("""
                Treat: {renamingIdentifier: Recipe, attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Treat, inverse: tags, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let before = try connection.execute("SELECT tags_pk, recipe_pk FROM shop.recipe__tags ORDER BY 1, 2").rows
            try S.migrate(model, on: connection)
            #expect(try connection.execute("SELECT tag_pk, recipes_pk FROM shop.tag__recipes ORDER BY 1, 2").rows == before)
            #expect(try !tableExists(schema: S.store, table: "recipe__tags", on: connection))
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aRenameThatMovesAOneToOneColumnKeepsEveryLink() throws {
        let model = try S.model([
            ("v1", S.version("Alpha: {attributes: {n: int32}, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {attributes: {n: int32}, relationships: {alpha: {destination: Alpha, inverse: partner}}}")),
            ("v2", S.version("Zeta: {renamingIdentifier: Alpha, attributes: {n: int32}, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {attributes: {n: int32}, relationships: {alpha: {destination: Zeta, inverse: partner}}}")),
        ])
        try S.withStore(model) { connection in
            let before = try connection.execute("SELECT partner_pk, _pk FROM shop.alpha WHERE partner_pk IS NOT NULL ORDER BY 1").rows
            #expect(before.count > 200)
            try S.migrate(model, on: connection)
            #expect(try connection.execute("SELECT _pk, alpha_pk FROM shop.beta WHERE alpha_pk IS NOT NULL ORDER BY 1").rows == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
