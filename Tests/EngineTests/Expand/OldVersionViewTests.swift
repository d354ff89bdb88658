import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// The old version served through views over a migrated store: renamed tables, columns and
/// entities, added attributes, attributes made required with a default, widened numbers. Each
/// reads the rows as the old version shows them, writes through the views and checks the new
/// tables' rows.
@Suite(integration) struct OldVersionViewTests {
    typealias S = MigratedStore
    typealias V = ServedVersion

    @Test func renamedColumnsAreServedUnderTheOldNamesAndWrittenThroughByPostgreSQL() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: int16}}")),
        ])
        try V.withServed(model, reading: [("recipe", ["name", "rating"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == ["recipe"])
            #expect(try V.old("recipe", ["_pk", "name", "rating"], on: connection) == before[0])

            let pk = try #require(try V.write("INSERT INTO recipe (name, rating) VALUES ('Soup', 4) RETURNING _pk", on: connection))
            #expect(try S.rows("recipe", ["title", "rating"], where: "_pk = \(pk)", on: connection) == [[pk, "Soup", "4"]])
            try V.write("UPDATE recipe SET name = 'Stew' WHERE _pk = \(pk)", on: connection)
            #expect(try S.rows("recipe", ["title"], where: "_pk = \(pk)", on: connection) == [[pk, "Stew"]])
            try V.write("DELETE FROM recipe WHERE _pk = \(pk)", on: connection)
            #expect(try S.rows("recipe", ["title"], where: "_pk = \(pk)", on: connection) == [])

            // The new version's writes, read in the old shape.
            let new = try #require(try connection.execute("INSERT INTO shop.recipe (title, rating) VALUES ('Pie', 2) RETURNING _pk").rows[0][0])
            #expect(try V.old("recipe", ["_pk", "name", "rating"], where: "_pk = \(new)", on: connection) == [[new, "Pie", "2"]])
        }
    }

    @Test func renamedTablesAndEntitiesAreTranslatedBothWays() throws {
        let model = try S.model([
            ("v1", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
            ("v2", S.version("Sweet: {renamingIdentifier: Dessert, attributes: {name: string}}\nTorte: {renamingIdentifier: Cake, parent: Sweet, attributes: {tiers: {type: int16, renamingIdentifier: layers}}}")),
        ])
        try V.withServed(model, reading: [("dessert", ["_entity", "name", "layers"])]) { connection, views, before in
            #expect(views.viewNames == ["dessert"] && views.autoUpdatableViews == [])
            #expect(before[0].contains { $0[1] == "Cake" } && before[0].contains { $0[1] == "Dessert" })
            #expect(try V.old("dessert", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])

            let pk = try #require(try V.write("INSERT INTO dessert (_entity, name, layers) VALUES ('Cake', 'Sacher', 3) RETURNING _pk", on: connection))
            #expect(try S.rows("sweet", ["_entity", "name", "tiers"], where: "_pk = \(pk)", on: connection) == [[pk, "Torte", "Sacher", "3"]])
            try V.write("UPDATE dessert SET _entity = 'Dessert', layers = NULL WHERE _pk = \(pk)", on: connection)
            #expect(try S.rows("sweet", ["_entity", "tiers"], where: "_pk = \(pk)", on: connection) == [[pk, "Sweet", nil]])
            #expect(try V.old("dessert", ["_pk", "_entity"], where: "_pk = \(pk)", on: connection) == [[pk, "Dessert"]])
            try V.write("DELETE FROM dessert WHERE _pk = \(pk)", on: connection)
            #expect(try S.rows("sweet", ["name"], where: "_pk = \(pk)", on: connection) == [])
            #expect(try V.old("dessert", ["_pk", "_entity", "name", "layers"], on: connection) == before[0])
        }
    }

    @Test func addedAttributesAreLeftOutAndRowsInsertedThroughTheViewGetTheirDefaults() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, notes: string, servings: {type: int32, optional: false, default: 2}}}")),
        ])
        try V.withServed(model, reading: [("recipe", ["name"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == ["recipe"])
            #expect(try V.columnTypes(of: "recipe", on: connection) == ["_pk bigint", "_entity text", "name text"])
            #expect(try V.old("recipe", ["_pk", "name"], on: connection) == before[0])
            let pk = try #require(try V.write("INSERT INTO recipe (name) VALUES ('Soup') RETURNING _pk", on: connection))
            #expect(try S.rows("recipe", ["_entity", "name", "notes", "servings"], where: "_pk = \(pk)", on: connection) == [[pk, "Recipe", "Soup", nil, "2"]])
        }
    }

    @Test func attributesMadeRequiredTakeTheDefaultForNullsTheOldVersionWrites() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}}}")),
        ])
        try V.withServed(model, reading: [("recipe", ["name", "rating"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == [])
            #expect(before[0].contains { $0[2] == nil })
            // The store was backfilled: the old version reads the defaults where it had NULLs.
            #expect(try V.old("recipe", ["_pk", "name", "rating"], on: connection) == before[0].map { [$0[0], $0[1], $0[2] ?? "0"] })

            let recipe = try #require(try V.write("INSERT INTO recipe (name, rating) VALUES ('Soup', NULL) RETURNING _pk", on: connection))
            #expect(try S.rows("recipe", ["rating"], where: "_pk = \(recipe)", on: connection) == [[recipe, "0"]])
            try V.write("UPDATE recipe SET rating = 5 WHERE _pk = \(recipe)", on: connection)
            try V.write("UPDATE recipe SET rating = NULL WHERE _pk = \(recipe)", on: connection)
            #expect(try S.rows("recipe", ["rating"], where: "_pk = \(recipe)", on: connection) == [[recipe, "0"]])

            // Only the entity that requires it gets the default.
            let dessert = try #require(try V.write("INSERT INTO dessert (_entity, name, layers) VALUES ('Dessert', 'Jelly', NULL) RETURNING _pk", on: connection))
            let cake = try #require(try V.write("INSERT INTO dessert (_entity, name, layers) VALUES ('Cake', 'Sponge', NULL) RETURNING _pk", on: connection))
            #expect(try S.rows("dessert", ["_entity", "layers"], where: "_pk IN (\(dessert), \(cake))", on: connection) == [[dessert, "Dessert", nil], [cake, "Cake", "1"]])
        }
    }

    @Test func widenedNumbersKeepTheOldTypesInTheViewAndTheNewInTheTable() throws {
        let model = try S.model([
            ("v1", S.version("Reading: {attributes: {a: int16, b: int32, flag: boolean}}")),
            ("v2", S.version("Reading: {attributes: {a: int32, b: int64, flag: int16}}")),
        ])
        try V.withServed(model, reading: [("reading", ["a", "b", "flag"])]) { connection, views, before in
            #expect(views.autoUpdatableViews == [])
            #expect(try V.columnTypes(of: "reading", on: connection) == ["_pk bigint", "_entity text", "a smallint", "b integer", "flag boolean"])
            #expect(try V.old("reading", ["_pk", "a", "b", "flag"], on: connection) == before[0])
            let pk = try #require(try V.write("INSERT INTO reading (a, b, flag) VALUES (7, 70000, true) RETURNING _pk", on: connection))
            #expect(try S.rows("reading", ["a", "b", "flag"], where: "_pk = \(pk)", on: connection) == [[pk, "7", "70000", "1"]])
            try V.write("UPDATE reading SET flag = false, a = -3 WHERE _pk = \(pk)", on: connection)
            #expect(try S.rows("reading", ["a", "flag"], where: "_pk = \(pk)", on: connection) == [[pk, "-3", "0"]])
            #expect(try V.old("reading", ["_pk", "flag"], where: "_pk = \(pk)", on: connection) == [[pk, "f"]])
        }
    }

    @Test func removedOptionalPropertiesReadAsNullOrTheOldDefaultAndTheirWritesAreDiscarded() throws {
        let model = try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string, notes: string, rating: {type: int16, optional: false, default: 2}}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
            ("v2", S.version("Recipe: {attributes: {name: string}}\nTag: {attributes: {label: string}}")),
        ])
        try V.withServed(model, allowDataLoss: true, reading: [("recipe", ["name"])]) { connection, views, before in
            #expect(views.viewNames == ["recipe", "tag", "recipe__tags"])
            #expect(try V.old("recipe", ["_pk", "name", "notes", "rating"], on: connection) == before[0].map { $0 + [nil, "2"] })
            #expect(try V.old("recipe__tags", ["recipe_pk", "tags_pk"], on: connection) == [])

            let recipe = try #require(try V.write("INSERT INTO recipe (name, notes, rating) VALUES ('Soup', 'hot', 5) RETURNING _pk", on: connection))
            #expect(try S.rows("recipe", ["name"], where: "_pk = \(recipe)", on: connection) == [[recipe, "Soup"]])
            #expect(try V.old("recipe", ["_pk", "notes", "rating"], where: "_pk = \(recipe)", on: connection) == [[recipe, nil, "2"]])
            let tag = try #require(try connection.execute("SELECT min(_pk) FROM shop.tag").rows[0][0])
            try V.write("INSERT INTO recipe__tags (recipe_pk, tags_pk) VALUES (\(recipe), \(tag))", on: connection)
            #expect(try V.old("recipe__tags", ["recipe_pk", "tags_pk"], on: connection) == [])
        }
    }
}
