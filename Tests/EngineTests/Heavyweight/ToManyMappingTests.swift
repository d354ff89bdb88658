import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Relationships kept outside their row's column (join tables, an inverse's to-one column)
/// filled in stage 2 of a heavyweight step, on stores holding rows: every link is compared
/// with the source's, row by row, by the names of the rows it joins.
@Suite(integration) struct ToManyMappingTests {
    typealias S = MigratedStore

    static let destinationInstances = "destinationInstancesForEntityMappingNamed:sourceInstances:"

    static func through(_ entityMapping: String, _ keyPath: String) -> String {
        #"FUNCTION($manager, ""# + destinationInstances + #"", ""# + entityMapping + #"", $source."# + keyPath + ")"
    }

    static func apply(_ model: VersionedModel, _ entityMappings: [EntityMappingDefinition], on connection: PostgresConnection) throws {
        let mapping = MappingModel(source: model.versions[0].name, destination: model.versions[1].name, entityMappings: entityMappings, file: "to-many.yaml")
        let report = try StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)]).apply()
        #expect(report.appliedSteps.map(\.step.kind) == [.heavyweight])
    }

    /// A copy entity mapping `<E>To<E>` per entity, everything else Xcode's defaults.
    static func copies(_ entities: String...) -> [EntityMappingDefinition] {
        entities.map { EntityMappingDefinition(name: $0 + "To" + $0, type: .copy, sourceEntity: $0, destinationEntity: $0) }
    }

    /// One line per row of the query, `a | b | c`, sorted.
    static func lines(_ sql: SQL, on connection: PostgresConnection) throws -> [String] {
        try connection.execute(sql).rows.map { $0.map { $0 ?? "NULL" }.joined(separator: " | ") }.sorted()
    }

    /// (owner name, linked name) of a join table.
    static func joined(_ schema: String, _ table: String, owner: (table: String, column: String), linked: (table: String, column: String), on connection: PostgresConnection) throws -> [String] {
        try lines("""
            SELECT o.name, l.name FROM \(ident: schema, table) j
            JOIN \(ident: schema, owner.table) o ON o._pk = j.\(ident: owner.column)
            JOIN \(ident: schema, linked.table) l ON l._pk = j.\(ident: linked.column)
            """, on: connection)
    }

    /// (row name, name of the row its to-one column points at), rows without a link left out.
    static func toOne(_ schema: String, _ table: String, _ column: String, to target: String, on connection: PostgresConnection) throws -> [String] {
        try lines("SELECT r.name, t.name FROM \(ident: schema, table) r JOIN \(ident: schema, target) t ON t._pk = r.\(ident: column)", on: connection)
    }

    static let name = "name: {type: string, optional: false}"

    /// The seeds' kitchen: a one-to-many kept in Recipe's chef_pk.
    static let chefsAndRecipes = """
        Chef: {attributes: {\(name)}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
        Recipe: {attributes: {\(name)}, relationships: {chef: {destination: Chef, inverse: recipes}}}
        """

    /// A many-to-many kept in the join table recipe__tags.
    static let recipesAndTags = """
        Recipe: {attributes: {\(name)}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
        Tag: {attributes: {\(name)}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
        """

    /// Relinks the rows of `table` linked through `column` to the first `owners` rows of
    /// `ownerTable` (the generator links one to one when both have as many rows).
    static func concentrate(_ table: String, _ column: String, onto ownerTable: String, owners: Int, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE \(ident: S.store, table) AS x SET \(ident: column) = o._pk
            FROM (SELECT _pk, row_number() OVER (ORDER BY _pk) - 1 AS n FROM \(ident: S.store, ownerTable)) AS o
            WHERE x.\(ident: column) IS NOT NULL AND o.n = x._pk % \(owners)
            """)
    }

    @Test func aManyToManyMappedByXcodesDefaultsKeepsEveryPair() throws {
        let model = try S.model([
            ("v1", S.version(Self.recipesAndTags)),
            ("v2", S.version("""
                Recipe: {attributes: {\(Self.name)}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
                Tag: {attributes: {\(Self.name), color: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let pairs = try Self.joined(S.store, "recipe__tags", owner: ("recipe", "recipe_pk"), linked: ("tag", "tags_pk"), on: connection)
            #expect(pairs.count == 600)

            // Both sides are mapped (Xcode's defaults): each offers the same pairs, kept once.
            try Self.apply(model, Self.copies("Recipe", "Tag"), on: connection)

            #expect(try Self.joined(S.store, "recipe__tags", owner: ("recipe", "recipe_pk"), linked: ("tag", "tags_pk"), on: connection) == pairs)
            #expect(try Self.joined("shop~", "recipe__tags", owner: ("recipe", "recipe_pk"), linked: ("tag", "tags_pk"), on: connection) == pairs)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Label sorts before Recipe: the pair's join table becomes label__dishes, owned by the
    /// other side, so Recipe.labels is stored in its inverse's join table. Label.dishes has no
    /// same-named source relationship, hence no default: it is mapped, or not at all.
    @Test(arguments: [true, false])
    func aRenamedManyToManyIsFilledThroughTheEntityMappingItNames(labelSideMapped: Bool) throws {
        let model = try S.model([
            ("v1", S.version(Self.recipesAndTags)),
            ("v2", S.version("""
                Recipe: {attributes: {\(Self.name)}, relationships: {labels: {destination: Label, inverse: dishes, toMany: true}}}
                Label: {attributes: {\(Self.name)}, relationships: {dishes: {destination: Recipe, inverse: labels, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let pairs = try Self.joined(S.store, "recipe__tags", owner: ("recipe", "recipe_pk"), linked: ("tag", "tags_pk"), on: connection)

            // Recipe.labels is read from the source join table Recipe owns; Label.dishes, when
            // mapped, from the Tag side, which does not own it: both offer the same pairs.
            let dishes = labelSideMapped ? [PropertyMappingDefinition(name: "dishes", valueExpression: Self.through("RecipeToRecipe", "recipes"))] : []
            try Self.apply(model, [
                EntityMappingDefinition(name: "TagToLabel", type: .transform, sourceEntity: "Tag", destinationEntity: "Label", relationshipMappings: dishes),
                EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                                        relationshipMappings: [PropertyMappingDefinition(name: "labels", valueExpression: Self.through("TagToLabel", "tags"))]),
            ], on: connection)

            #expect(try Self.joined(S.store, "label__dishes", owner: ("recipe", "dishes_pk"), linked: ("label", "label_pk"), on: connection) == pairs)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func orderedRelationshipsKeepTheSourceOrderAndANewlyOrderedOneFollowsTheSourceKeys() throws {
        let source = """
            Playlist: {attributes: {\(Self.name)}, relationships: {songs: {destination: Song, inverse: playlists, toMany: true, ordered: true}}}
            Song: {attributes: {\(Self.name)}, relationships: {playlists: {destination: Playlist, inverse: songs, toMany: true}, album: {destination: Album, inverse: songs}}}
            Album: {attributes: {\(Self.name)}, relationships: {songs: {destination: Song, inverse: album, toMany: true, ordered: true}}}
            """
        let model = try S.model([
            ("v1", S.version(source)),
            // Song.playlists becomes ordered too.
            ("v2", S.version(source.replacingOccurrences(of: "playlists: {destination: Playlist, inverse: songs, toMany: true}",
                                                        with: "playlists: {destination: Playlist, inverse: songs, toMany: true, ordered: true}"))),
        ])
        try S.withStore(model) { connection in
            // Reverse the generated orders, so that they disagree with the keys' order.
            try connection.execute("UPDATE shop.playlist__songs SET songs_order = 1 - songs_order")
            try Self.concentrate("song", "album_pk", onto: "album", owners: 30, on: connection)
            try connection.execute("""
                UPDATE shop.song AS s SET album_order = o.position
                FROM (SELECT _pk, row_number() OVER (PARTITION BY album_pk ORDER BY _pk DESC) - 1 AS position FROM shop.song) o
                WHERE o._pk = s._pk AND s.album_pk IS NOT NULL
                """)
            let playlistOrder: SQL = """
                SELECT p.name, j.songs_order, s.name FROM shop.playlist__songs j
                JOIN shop.playlist p ON p._pk = j.playlist_pk JOIN shop.song s ON s._pk = j.songs_pk
                """
            let albumOrder: SQL = "SELECT a.name, s.album_order, s.name FROM shop.song s JOIN shop.album a ON a._pk = s.album_pk"
            let playlists = try Self.lines(playlistOrder, on: connection)
            let albums = try Self.lines(albumOrder, on: connection)
            // Each song's playlists, in the order of their source keys.
            let byKey = try Self.lines("""
                SELECT s.name, row_number() OVER (PARTITION BY s._pk ORDER BY p._pk) - 1, p.name FROM shop.playlist__songs j
                JOIN shop.playlist p ON p._pk = j.playlist_pk JOIN shop.song s ON s._pk = j.songs_pk
                """, on: connection)
            #expect(playlists.count == 600 && albums.count > 250 && Set(albums.map { $0.split(separator: "|")[0] }).count == 30)
            let reversed = try Self.lines("""
                SELECT count(*) FROM shop.playlist__songs a JOIN shop.playlist__songs b
                ON b.playlist_pk = a.playlist_pk AND a.songs_order = 0 AND b.songs_order = 1 WHERE a.songs_pk > b.songs_pk
                """, on: connection)
            #expect(reversed != ["0"], "the source order disagrees with the keys' order")

            // Song first: its pairs come without Playlist's order, which is added to them.
            try Self.apply(model, Self.copies("Song", "Playlist", "Album"), on: connection)

            #expect(try Self.lines(playlistOrder, on: connection) == playlists)
            #expect(try Self.lines(albumOrder, on: connection) == albums)
            #expect(try Self.lines("""
                SELECT s.name, j.playlists_order, p.name FROM shop.playlist__songs j
                JOIN shop.playlist p ON p._pk = j.playlist_pk JOIN shop.song s ON s._pk = j.songs_pk
                """, on: connection) == byKey)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aOneToManyMappedOnlyFromItsToManySideSetsTheInverseColumn() throws {
        let model = try S.model([
            ("v1", S.version(Self.chefsAndRecipes)),
            // Recipe.author has no source relationship of its name: no default, no link from
            // the to-one side.
            ("v2", S.version("""
                Chef: {attributes: {\(Self.name)}, relationships: {recipes: {destination: Recipe, inverse: author, toMany: true}}}
                Recipe: {attributes: {\(Self.name)}, relationships: {author: {destination: Chef, inverse: recipes}}}
                """)),
        ])
        try S.withStore(model) { connection in
            try Self.concentrate("recipe", "chef_pk", onto: "chef", owners: 30, on: connection)
            let links = try Self.toOne(S.store, "recipe", "chef_pk", to: "chef", on: connection)
            #expect(links.count > 200 && links.count < 300)

            try Self.apply(model, Self.copies("Chef", "Recipe"), on: connection)

            #expect(try Self.toOne(S.store, "recipe", "author_pk", to: "chef", on: connection) == links)
            #expect(try rowCount(schema: S.store, table: "recipe", on: connection) == 300)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func anOrderedToManyMappedOnlyFromItsToOneSideNumbersTheLinksBySourceKey() throws {
        let model = try S.model([
            ("v1", S.version("""
                Album: {attributes: {\(Self.name)}, relationships: {songs: {destination: Song, inverse: album, toMany: true}}}
                Song: {attributes: {\(Self.name)}, relationships: {album: {destination: Album, inverse: songs}}}
                """)),
            // Album.tracks has no source relationship of its name: only Song.album is mapped.
            ("v2", S.version("""
                Album: {attributes: {\(Self.name)}, relationships: {tracks: {destination: Song, inverse: album, toMany: true, ordered: true}}}
                Song: {attributes: {\(Self.name)}, relationships: {album: {destination: Album, inverse: tracks}}}
                """)),
        ])
        try S.withStore(model) { connection in
            try Self.concentrate("song", "album_pk", onto: "album", owners: 30, on: connection)
            let bySourceKey = try Self.lines("SELECT a.name, row_number() OVER (PARTITION BY a._pk ORDER BY s._pk) - 1, s.name FROM shop.song s JOIN shop.album a ON a._pk = s.album_pk", on: connection)
            #expect(bySourceKey.count > 250)

            try Self.apply(model, Self.copies("Album", "Song"), on: connection)

            #expect(try Self.lines("SELECT a.name, s.album_order, s.name FROM shop.song s JOIN shop.album a ON a._pk = s.album_pk", on: connection) == bySourceKey)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aOneToOneMappedOnlyFromTheSideWithoutTheColumnSetsTheOtherSidesColumn() throws {
        let model = try S.model([
            // Passport.holder sorts first: the pair's column is passport.holder_pk.
            ("v1", S.version("""
                Person: {attributes: {\(Self.name)}, relationships: {passport: {destination: Passport, inverse: holder}}}
                Passport: {attributes: {\(Self.name)}, relationships: {holder: {destination: Person, inverse: passport}}}
                """)),
            // Passport.bearer has no source relationship of its name: only Person.passport is mapped.
            ("v2", S.version("""
                Person: {attributes: {\(Self.name)}, relationships: {passport: {destination: Passport, inverse: bearer}}}
                Passport: {attributes: {\(Self.name)}, relationships: {bearer: {destination: Person, inverse: passport}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let links = try Self.toOne(S.store, "passport", "holder_pk", to: "person", on: connection)
            #expect(links.count > 200 && links.count < 300)

            try Self.apply(model, Self.copies("Person", "Passport"), on: connection)

            #expect(try Self.toOne(S.store, "passport", "bearer_pk", to: "person", on: connection) == links)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func theToOneSideWinsWhereBothSidesOfAOneToManyDisagree() throws {
        let model = try S.model([
            ("v1", S.version("""
                Chef: {attributes: {\(Self.name)}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}, favorites: {destination: Recipe, inverse: fan, toMany: true}}}
                Recipe: {attributes: {\(Self.name)}, relationships: {chef: {destination: Chef, inverse: recipes}, fan: {destination: Chef, inverse: favorites}}}
                """)),
            ("v2", S.version("""
                Chef: {attributes: {\(Self.name)}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
                Recipe: {attributes: {\(Self.name)}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                """)),
        ])
        try S.withStore(model) { connection in
            // Some recipes have a chef and no fan, some a fan and no chef, some both, not the same.
            try connection.execute("UPDATE shop.recipe SET chef_pk = NULL WHERE _pk % 3 = 0")
            try connection.execute("UPDATE shop.recipe SET fan_pk = NULL WHERE _pk % 3 = 1")
            try connection.execute("UPDATE shop.recipe SET fan_pk = (SELECT min(_pk) FROM shop.chef) WHERE _pk % 3 = 2")
            let expected = try Self.lines("""
                SELECT r.name, c.name FROM shop.recipe r JOIN shop.chef c ON c._pk = coalesce(r.chef_pk, r.fan_pk)
                """, on: connection)
            #expect(try Self.lines("SELECT count(*) FROM shop.recipe WHERE chef_pk IS DISTINCT FROM fan_pk AND chef_pk IS NOT NULL AND fan_pk IS NOT NULL", on: connection) != ["0"])

            // Chef.recipes from the favorites; Recipe.chef by default from the chef.
            try Self.apply(model, [
                EntityMappingDefinition(name: "ChefToChef", type: .transform, sourceEntity: "Chef", destinationEntity: "Chef",
                                        relationshipMappings: [PropertyMappingDefinition(name: "recipes", valueExpression: Self.through("RecipeToRecipe", "favorites"))]),
                EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
            ], on: connection)

            #expect(try Self.toOne(S.store, "recipe", "chef_pk", to: "chef", on: connection) == expected)
        }
    }

    @Test func aOneToManyBecomesAManyToManyFromTheInverseColumnAndAToOnePath() throws {
        let model = try S.model([
            ("v1", S.version(Self.chefsAndRecipes)),
            // related: the recipes of the same chef, itself included (a to-many with no inverse).
            ("v2", S.version("""
                Chef: {attributes: {\(Self.name)}, relationships: {recipes: {destination: Recipe, inverse: chefs, toMany: true}}}
                Recipe: {attributes: {\(Self.name)}, relationships: {chefs: {destination: Chef, inverse: recipes, toMany: true}, related: {destination: Recipe, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            try Self.concentrate("recipe", "chef_pk", onto: "chef", owners: 30, on: connection)
            let links = try Self.toOne(S.store, "recipe", "chef_pk", to: "chef", on: connection)
            let related = try Self.lines("SELECT r.name, o.name FROM shop.recipe r JOIN shop.recipe o ON o.chef_pk = r.chef_pk", on: connection)
            #expect(related.count > links.count)

            try Self.apply(model, [
                EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
                EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", relationshipMappings: [
                    PropertyMappingDefinition(name: "chefs", valueExpression: Self.through("ChefToChef", "chef")),
                    PropertyMappingDefinition(name: "related", valueExpression: Self.through("RecipeToRecipe", "chef.recipes")),
                ]),
            ], on: connection)

            #expect(try Self.joined(S.store, "chef__recipes", owner: ("recipe", "recipes_pk"), linked: ("chef", "chef_pk"), on: connection) == links)
            #expect(try Self.joined(S.store, "recipe__related", owner: ("recipe", "recipe_pk"), linked: ("recipe", "related_pk"), on: connection) == related)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
