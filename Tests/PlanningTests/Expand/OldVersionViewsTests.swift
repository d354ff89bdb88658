import Foundation
import Testing
import ObjectModel
@testable import Planning

/// The views that serve an old version over the new tables, generated from two inline
/// versions: their SQL for a plain rename, which views need a trigger, the schema's name, and
/// each refusal with its stable code and message.
@Suite struct OldVersionViewsTests {
    static func views(_ source: String, _ destination: String, store: String = "s") throws -> OldVersionViews {
        let from = try InferenceFixtures.version(source, name: "v1")
        let to = try InferenceFixtures.version(destination, name: "v2")
        let mapping = try #require(MappingInference.infer(from: from, to: to).mapping, "not inferable")
        return try OldVersionViews(mapping: mapping, from: from, to: to, store: store)
    }

    /// As `plan --expand` makes them: with the columns and tables `ExpandDeferral` keeps.
    static func planned(_ source: String, _ destination: String, store: String = "s") throws -> OldVersionViews {
        let from = try InferenceFixtures.version(source, name: "v1")
        let to = try InferenceFixtures.version(destination, name: "v2")
        let mapping = try #require(MappingInference.infer(from: from, to: to).mapping, "not inferable")
        let deferral = ExpandDeferral(pairing: LayoutPairing(mapping: mapping, source: from, destination: to, schema: store), store: store)
        return try OldVersionViews(
            mapping: mapping, from: from, to: to, store: store, keptColumns: deferral.keptColumns, keptTables: deferral.keptTables
        )
    }

    static func refusals(_ source: String, _ destination: String) throws -> [ExpandRefusal] {
        do {
            _ = try planned(source, destination)
            return []
        } catch let refused as ExpandRefused {
            return refused.refusals
        }
    }

    @Test func aRenamedColumnIsOneViewPostgreSQLWritesThroughWithTheOldDefaults() throws {
        let views = try Self.views(
            "Recipe: {attributes: {name: string, rating: {type: int16, default: 3}}}",
            "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: {type: int16, default: 3}, notes: string}}"
        )
        #expect(views.statements.map(\.text) == [
            #"CREATE SCHEMA "s@v1""#,
            #"COMMENT ON SCHEMA "s@v1" IS 'orchestrator: version v1 of store s, served through views'"#,
            #"CREATE VIEW "s@v1"."recipe" AS SELECT t."_pk" AS "_pk", t."_entity" AS "_entity", t."title" AS "name", t."rating" AS "rating" FROM "s"."recipe" AS t"#,
            #"ALTER VIEW "s@v1"."recipe" ALTER COLUMN "_entity" SET DEFAULT 'Recipe'"#,
            #"ALTER VIEW "s@v1"."recipe" ALTER COLUMN "rating" SET DEFAULT 3"#,
        ])
        let carriesNoBinds = views.statements.allSatisfy { $0.binds.isEmpty }
        #expect(carriesNoBinds)
    }

    @Test func viewsThatTranslateValuesGetAnInsteadOfTrigger() throws {
        let views = try Self.views(
            "Recipe: {attributes: {name: string, rating: int16}}\nTag: {attributes: {label: string}}",
            "Dish: {renamingIdentifier: Recipe, attributes: {name: string, rating: int32}}\nTag: {attributes: {label: string}}"
        )
        #expect(views.viewNames == ["recipe", "tag"])
        #expect(views.autoUpdatableViews == ["tag"])
        let text = views.statements.map(\.text).joined(separator: "\n")
        #expect(text.contains(#"CASE t."_entity" WHEN 'Dish' THEN 'Recipe' ELSE t."_entity" END AS "_entity""#))
        #expect(text.contains(#"CAST(t."rating" AS smallint) AS "rating""#))
        #expect(text.contains(#"CREATE TRIGGER "write" INSTEAD OF INSERT OR UPDATE OR DELETE ON "s@v1"."recipe" FOR EACH ROW EXECUTE FUNCTION "s@v1"."recipe_write"()"#))
        #expect(text.contains(#"INSERT INTO "s"."dish" ("_pk", "_entity", "name", "rating") VALUES (NEW."_pk", CASE NEW."_entity" WHEN 'Recipe' THEN 'Dish' ELSE NEW."_entity" END, NEW."name", CAST(NEW."rating" AS integer))"#))
    }

    @Test func theSchemaIsNamedAfterTheStoreAndTheVersion() {
        #expect(OldVersionViews.schemaName(store: "shop", version: "v1") == "shop@v1")
        #expect(OldVersionViews.schemaName(store: "shop", version: "Model 2.1 (beta)") == "shop@Model_2.1__beta_")
        #expect(OldVersionViews.schemaName(store: "shop", version: String(repeating: "v", count: 80)).utf8.count == 63)
    }

    @Test func removedOptionalPropertiesAreServedAsNullsAndTheirWritesDiscarded() throws {
        let views = try Self.views(
            "Recipe: {attributes: {name: string, notes: string, rating: {type: int16, optional: false, default: 2}}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}\nTag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}",
            "Recipe: {attributes: {name: string}}\nTag: {attributes: {label: string}}"
        )
        #expect(views.viewNames == ["recipe", "tag", "recipe__tags"])
        let text = views.statements.map(\.text).joined(separator: "\n")
        #expect(text.contains(#"CAST(NULL AS text) AS "notes", CAST(2 AS smallint) AS "rating""#))
        #expect(text.contains(#"CREATE VIEW "s@v1"."recipe__tags" AS SELECT CAST(NULL AS bigint) AS "recipe_pk", CAST(NULL AS bigint) AS "tags_pk" WHERE false"#))
    }

    @Test func aRemovedEntityIsServedFromItsOwnTableKeptUntilComplete() throws {
        let views = try Self.planned(
            "Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}, notes: {destination: Note, inverse: recipe, toMany: true}, cover: {destination: Note, inverse: covered}}}\nTag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}\nNote: {attributes: {text: string}, relationships: {recipe: {destination: Recipe, inverse: notes}, covered: {destination: Recipe, inverse: cover, toMany: true}}}",
            "Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}\nTag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}"
        )
        #expect(views.viewNames.contains("note"))
        let text = views.statements.map(\.text).joined(separator: "\n")
        #expect(text.contains(#"CREATE VIEW "s@v1"."note" AS SELECT t."_pk" AS "_pk", t."_entity" AS "_entity", t."text" AS "text", t."recipe_pk" AS "recipe_pk" FROM "s"."note" AS t"#), "\(text)")
        #expect(text.contains(#"t."cover_pk" AS "cover_pk" FROM "s"."recipe" AS t"#), "\(text)")
        #expect(views.autoUpdatableViews.contains("note"))
    }

    static let refused: [(source: String, destination: String, refusal: ExpandRefusal)] = [
        (
            "Item: {attributes: {name: string}}\nBox: {parent: Item, attributes: {size: int16}}", "Item: {attributes: {name: string}}",
            ExpandRefusal(.expandRemovedEntitySharesTable, "entity Box removed: its rows share table item with Item, which the new version keeps, so the step deletes them and the old version would find them gone")
        ),
        (
            "Recipe: {attributes: {name: string}}\nURLItem: {attributes: {address: string}}",
            "Recipe: {attributes: {name: string}}\nUrlItem: {attributes: {address: string}}",
            ExpandRefusal(.expandRemovedTableTaken, "entity URLItem removed: the new version has a table named url_item, so its rows cannot be kept there until complete")
        ),
        (
            "Recipe: {attributes: {name: string}, relationships: {notes: {destination: Note, inverse: recipe, toMany: true, deleteRule: deny}}}\nNote: {attributes: {text: string}, relationships: {recipe: {destination: Recipe, inverse: notes}}}",
            "Recipe: {attributes: {name: string}}",
            ExpandRefusal(.expandRemovedLinkDenies, "entity Note removed: note.recipe_pk denies deleting the rows of recipe it links to (RESTRICT), which would stop the new version's deletes until complete")
        ),
        (
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}",
            "Dessert: {attributes: {name: string}}\nCake: {attributes: {name: string, layers: int16}}",
            ExpandRefusal(.expandRowsMoved, "entity Cake: its rows move from table dessert to cake, and a view of dessert reads one table")
        ),
        (
            "Reading: {attributes: {a: int32}}", "Reading: {attributes: {a: int16}}",
            ExpandRefusal(.expandLossyTypeChange, "Reading.a converted from Integer 32 to Integer 16: a value the old version writes may not fit (integers from -32768 to 32767 fit)")
        ),
        (
            "Recipe: {attributes: {name: string, code: {type: string, optional: false}}}", "Recipe: {attributes: {name: string}}",
            ExpandRefusal(.expandRemovedRequired, "Recipe.code removed: it is required without a default, and the old version would read NULL in it")
        ),
        (
            "Recipe: {attributes: {name: string}}\nChef: {attributes: {name: string}}",
            "Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes, optional: false}}}\nChef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}",
            ExpandRefusal(.expandRequiredLink, "Recipe.chef added as a required to-one: rows the old version inserts cannot give it a value")
        ),
        (
            "Recipe: {attributes: {name: string, code: string}}",
            "Recipe: {attributes: {name: string, code: string}, uniquenessConstraints: [[code]]}",
            ExpandRefusal(.expandUniqueAdded, "Recipe: uniqueness constraint (code) added: the store enforces it at once, and rows the old version writes may break it")
        ),
        (
            "Item: {attributes: {name: string}}\nBox: {parent: Item, attributes: {size: int16}}\nBag: {parent: Item, attributes: {size: int16}}",
            "Item: {attributes: {name: string}}\nBox: {parent: Item, attributes: {size: int16}}\nBag: {parent: Item, attributes: {size: int32}}",
            ExpandRefusal(.expandColumnsRegrouped, "item.size_integer holds the values of item.size for Bag: one old column would read several new ones by entity")
        ),
    ]

    @Test(arguments: Self.refused.indices)
    func aChangeNoViewCanServeIsRefusedWithItsCode(_ index: Int) throws {
        let (source, destination, refusal) = Self.refused[index]
        #expect(try Self.refusals(source, destination) == [refusal])
    }

    @Test func everyRefusalCodeIsPinnedAndDocumented() throws {
        let pinned = Set(Self.refused.map(\.refusal.code))
        #expect(pinned.union([.expandLinksMoved, .expandEntityRemoved]) == Set(ExpandRefusal.Code.allCases))
        let docs = try String(contentsOfFile: Fixtures.repository + "/docs/two-versions.md", encoding: .utf8)
        for code in ExpandRefusal.Code.allCases {
            #expect(docs.contains("`\(code.rawValue)`"), "docs/two-versions.md does not list \(code.rawValue)")
        }
    }

    @Test func aOneToOneWhoseColumnChangesSidesIsRefusedAsLinksMoved() throws {
        let refusals = try Self.refusals(
            "Recipe: {relationships: {card: {destination: Card, inverse: recipe}}}\nCard: {attributes: {text: string}, relationships: {recipe: {destination: Recipe, inverse: card}}}",
            "Recipe: {relationships: {card: {destination: Card, inverse: recipe}}}\nCard: {attributes: {text: string}, relationships: {recipe: {destination: Recipe, inverse: card, toMany: true}}}"
        )
        #expect(refusals == [ExpandRefusal(.expandLinksMoved, "Card.recipe: its links leave card.recipe_pk for a place the views cannot translate")])
    }

    @Test func aTableWhoseOldEntitiesWereAllAbstractIsAnEmptyView() throws {
        let views = try Self.views("Shape: {abstract: true, attributes: {name: string}}", "Shape: {abstract: true, attributes: {name: string}}\nCircle: {parent: Shape}")
        #expect(views.statements.map(\.text).contains(#"CREATE VIEW "s@v1"."shape" AS SELECT t."_pk" AS "_pk", t."_entity" AS "_entity", t."name" AS "name" FROM "s"."shape" AS t WHERE false"#))
    }
}
