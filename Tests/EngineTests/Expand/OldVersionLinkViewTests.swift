import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// The old version served through views where links changed shape (to-one -> to-many, ordered
/// <-> unordered) and where entities moved within a hierarchy.
@Suite(integration) struct OldVersionLinkViewTests {
    typealias S = MigratedStore
    typealias V = ServedVersion

    static func chefAndRecipes(recipe: String = "destination: Chef, inverse: recipes", chef: String = "destination: Recipe, inverse: chef, toMany: true") -> String {
        S.version("Recipe: {attributes: {name: string}, relationships: {chef: {\(recipe)}}}\nChef: {attributes: {name: string}, relationships: {recipes: {\(chef)}}}")
    }

    @Test func aToOneMadeToManyIsReadAsItsFirstLinkAndWrittenAsTheOnlyOne() throws {
        let model = try S.model([
            ("v1", Self.chefAndRecipes()),
            ("v2", Self.chefAndRecipes(recipe: "destination: Chef, inverse: recipes, toMany: true")),
        ])
        try V.withServed(model, reading: [("recipe", ["name", "chef_pk"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == ["chef"])
            #expect(before[0].contains { $0[2] != nil })
            #expect(try V.old("recipe", ["_pk", "name", "chef_pk"], on: connection) == before[0])
            let chefs = try connection.execute("SELECT _pk FROM shop.chef ORDER BY _pk LIMIT 2").rows.map { $0[0]! }
            func links(_ recipe: String) throws -> [[String?]] {
                try connection.execute("SELECT chef_pk FROM shop.chef__recipes WHERE recipes_pk = \(unsafeRaw: recipe) ORDER BY 1").rows
            }

            let recipe = try #require(try V.write("INSERT INTO recipe (name, chef_pk) VALUES ('Soup', \(chefs[0])) RETURNING _pk", on: connection))
            #expect(try links(recipe) == [[chefs[0]]])
            try V.write("UPDATE recipe SET chef_pk = \(chefs[1]) WHERE _pk = \(recipe)", on: connection)
            #expect(try links(recipe) == [[chefs[1]]])
            // The new version links a second chef; the old one reads the first.
            try connection.execute("INSERT INTO shop.chef__recipes (chef_pk, recipes_pk) VALUES (\(unsafeRaw: chefs[0]), \(unsafeRaw: recipe))")
            #expect(try V.old("recipe", ["_pk", "chef_pk"], where: "_pk = \(recipe)", on: connection) == [[recipe, chefs[0]]])
            try V.write("UPDATE recipe SET chef_pk = NULL WHERE _pk = \(recipe)", on: connection)
            #expect(try links(recipe) == [])
            try V.write("DELETE FROM recipe WHERE _pk = \(recipe)", on: connection)
            #expect(try S.rows("recipe", ["name"], where: "_pk = \(recipe)", on: connection) == [])
        }
    }

    @Test func linksTheOldVersionAddsToAToManyMadeOrderedGoLast() throws {
        let manyToMany = { (ordered: String) in S.version("""
            Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true\(ordered)}}}
            Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
            """) }
        let model = try S.model([("v1", manyToMany("")), ("v2", manyToMany(", ordered: true"))])
        try V.withServed(model, reading: []) { connection, views, _ in
            #expect(Set(views.viewNames) == ["recipe", "tag", "recipe__tags"] && !views.autoUpdatableViews.contains("recipe__tags"))
            let linked = try connection.execute("SELECT recipe_pk, count(*) FROM shop.recipe__tags GROUP BY 1 ORDER BY 1 LIMIT 1").rows[0]
            let (recipe, count) = (linked[0]!, linked[1]!)
            let tag = try #require(try connection.execute("SELECT _pk FROM shop.tag WHERE _pk NOT IN (SELECT tags_pk FROM shop.recipe__tags WHERE recipe_pk = \(unsafeRaw: recipe)) ORDER BY 1 LIMIT 1").rows.first?[0])
            try V.write("INSERT INTO recipe__tags (recipe_pk, tags_pk) VALUES (\(recipe), \(tag))", on: connection)
            #expect(try connection.execute("SELECT tags_order FROM shop.recipe__tags WHERE recipe_pk = \(unsafeRaw: recipe) AND tags_pk = \(unsafeRaw: tag)").rows == [[count]])
            #expect(try V.old("recipe__tags", ["recipe_pk", "tags_pk"], where: "recipe_pk = \(recipe)", on: connection).count == Int(count)! + 1)
            try V.write("DELETE FROM recipe__tags WHERE recipe_pk = \(recipe) AND tags_pk = \(tag)", on: connection)
            #expect(try connection.execute("SELECT count(*) FROM shop.recipe__tags WHERE recipe_pk = \(unsafeRaw: recipe)").rows == [[count]])
        }
    }

    @Test func aOneToManyMadeUnorderedIsReadWithPositionsByKey() throws {
        let model = try S.model([
            ("v1", Self.chefAndRecipes(chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true")),
            ("v2", Self.chefAndRecipes()),
        ])
        try V.withServed(model, reading: [("recipe", ["chef_pk"])]) { connection, _, before in
            var seen: [String: Int] = [:]
            let expected = before[0].map { row -> [String?] in
                guard let chef = row[1] else { return row + [nil] }
                defer { seen[chef, default: 0] += 1 }
                return row + [String(seen[chef, default: 0])]
            }
            #expect(try V.old("recipe", ["_pk", "chef_pk", "chef_order"], on: connection) == expected)
            let chef = try #require(expected.compactMap { $0[1] }.first)
            let recipe = try #require(try V.write("INSERT INTO recipe (name, chef_pk, chef_order) VALUES ('Soup', \(chef), 0) RETURNING _pk", on: connection))
            #expect(try S.rows("recipe", ["name", "chef_pk"], where: "_pk = \(recipe)", on: connection) == [[recipe, "Soup", chef]])
            #expect(try V.old("recipe", ["_pk", "chef_order"], where: "_pk = \(recipe)", on: connection) == [[recipe, String(seen[chef]!)]])
        }
    }

    @Test func anEntityMovedBelowANewParentKeepsItsRowsAndTheNewEntitysRowsStayHidden() throws {
        let model = try S.model([
            ("v1", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
            ("v2", S.version("Dessert: {attributes: {name: string}}\nBaked: {parent: Dessert, attributes: {oven: int16}}\nCake: {parent: Baked, attributes: {layers: int16}}")),
        ])
        try V.withServed(model, reading: [("dessert", ["_entity", "name", "layers"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == ["dessert"])
            #expect(try V.old("dessert", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])
            try connection.execute("INSERT INTO shop.dessert (_entity, name, oven) VALUES ('Baked', 'Bread', 180)")
            #expect(try V.old("dessert", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])
            let cake = try #require(try V.write("INSERT INTO dessert (_entity, name, layers) VALUES ('Cake', 'Sponge', 2) RETURNING _pk", on: connection))
            #expect(try S.rows("dessert", ["_entity", "name", "layers", "oven"], where: "_pk = \(cake)", on: connection) == [[cake, "Cake", "Sponge", "2", nil]])
        }
    }

    @Test func aRootGivenAParentIsServedFromTheNewHierarchysTable() throws {
        let model = try S.model([
            ("v1", S.version("Cake: {attributes: {name: string, layers: int16}}")),
            ("v2", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
        ])
        try V.withServed(model, reading: [("cake", ["_entity", "name", "layers"])]) { connection, views, before in
            #expect(views.viewNames == ["cake"])
            #expect(try V.old("cake", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])
            try connection.execute("INSERT INTO shop.dessert (_entity, name) VALUES ('Dessert', 'Jelly')")
            #expect(try V.old("cake", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])
            // `_entity` left out: the old table's default, Cake.
            let cake = try #require(try V.write("INSERT INTO cake (name, layers) VALUES ('Sponge', 2) RETURNING _pk", on: connection))
            #expect(try S.rows("dessert", ["_entity", "name", "layers"], where: "_pk = \(cake)", on: connection) == [[cake, "Cake", "Sponge", "2"]])
        }
    }
}
