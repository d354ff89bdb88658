import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Entities added, removed and renamed, on a store holding rows.
/// Proves Planning/Changes: AddTable, DropTables, DeleteRows, DetachReferences, DataCheck,
/// RenameTable, RenameConstraint, UpdateEntityNames.
@Suite(integration) struct EntityMigrationTests {
    typealias S = MigratedStore

    @Test func addingAnEntityKeepsEveryRowAndLinksNothingYet() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}")),
            ("v2", S.version("""
                Recipe: {attributes: {name: string, rating: int16}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
                Cuisine: {attributes: {name: {type: string, optional: false}}, relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "rating"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name", "rating"], on: connection) == before)
            #expect(try S.rows("recipe", ["cuisine_pk"], on: connection).allSatisfy { $0[1] == nil })
            #expect(try rowCount(schema: S.store, table: "cuisine", on: connection) == 0)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func removingAnEntityDropsItsRowsOnlyWithConsent() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}\nCuisine: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            let refusal = #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            #expect(refusal?.description == "the migration loses data: step 1 of 1 ('v1' -> 'v2') entity Cuisine removed: every row of it is deleted; nothing was changed (run again with --allow-data-loss to accept the loss)")
            #expect(try rowCount(schema: S.store, table: "cuisine", on: connection) == 300)
            #expect(try S.version(on: connection) == "v1")

            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try !tableExists(schema: S.store, table: "cuisine", on: connection))
            #expect(try S.rows("recipe", ["name"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Olvid's ObvMessenger 44 -> 45 removes two sub-entities of PersistedDiscussion whose
    /// messages cascade: deleting the removed rows must not delete the messages (nor what
    /// cascades from them), only their links to the removed rows.
    @Test func removingASubEntityKeepsTheRowsThatLinkedToItsRowsWithACascadeRule() throws {
        let model = try S.model([
            ("v1", S.version("""
                Discussion: {attributes: {title: string}, relationships: {messages: {destination: Message, inverse: discussion, toMany: true, deleteRule: cascade}}}
                LockedDiscussion: {parent: Discussion}
                OpenDiscussion: {parent: Discussion}
                Message: {attributes: {body: string}, relationships: {discussion: {destination: Discussion, inverse: messages}, expiration: {destination: Expiration, inverse: message}}}
                Expiration: {attributes: {seconds: int32}, relationships: {message: {destination: Message, inverse: expiration, deleteRule: cascade}}}
                """)),
            ("v2", S.version("""
                Discussion: {attributes: {title: string}, relationships: {messages: {destination: Message, inverse: discussion, toMany: true, deleteRule: cascade}}}
                OpenDiscussion: {parent: Discussion}
                Message: {attributes: {body: string}, relationships: {discussion: {destination: Discussion, inverse: messages}, expiration: {destination: Expiration, inverse: message}}}
                Expiration: {attributes: {seconds: int32}, relationships: {message: {destination: Message, inverse: expiration, deleteRule: cascade}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let locked = try connection.execute("SELECT count(*) AS n FROM shop.message WHERE discussion_pk IN (SELECT _pk FROM shop.discussion WHERE _entity = 'LockedDiscussion')").int(0, "n")
            #expect((locked ?? 0) > 0, "the sample rows link messages to locked discussions")
            let messages = try S.rows("message", ["body"], on: connection)
            let expirations = try S.rows("expiration", ["seconds"], on: connection)
            let refusal = #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            #expect(refusal?.description.contains("entity LockedDiscussion removed") == true)

            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("message", ["body"], on: connection) == messages)
            #expect(try S.rows("expiration", ["seconds"], on: connection) == expirations)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.discussion WHERE _entity = 'LockedDiscussion'").int(0, "n") == 0)
            // Links to the removed rows are gone; links to kept rows stay.
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.message WHERE discussion_pk IS NOT NULL AND discussion_pk NOT IN (SELECT _pk FROM shop.discussion)").int(0, "n") == 0)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// The same removal when kept rows must link to a discussion: the pre-check names them and
    /// the step stops before anything changes (Core Data's validation refuses them too).
    @Test func removingTheTargetOfARequiredLinkStopsAtThePreCheckNamingTheRows() throws {
        let discussion = "Discussion: {attributes: {title: string}, relationships: {messages: {destination: Message, inverse: discussion, toMany: true, deleteRule: cascade}}}"
        let message = "Message: {attributes: {body: string}, relationships: {discussion: {destination: Discussion, inverse: messages, optional: false}}}"
        let model = try S.model([
            ("v1", S.version([discussion, "LockedDiscussion: {parent: Discussion}", "OpenDiscussion: {parent: Discussion}", message].joined(separator: "\n"))),
            ("v2", S.version([discussion, "OpenDiscussion: {parent: Discussion}", message].joined(separator: "\n"))),
        ])
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.message SET discussion_pk = (SELECT min(_pk) FROM shop.discussion WHERE _entity = 'LockedDiscussion') WHERE _pk % 3 = 0")
            let linked = try connection.execute("SELECT count(*) AS n FROM shop.message WHERE discussion_pk IN (SELECT _pk FROM shop.discussion WHERE _entity = 'LockedDiscussion')").int(0, "n") ?? 0
            #expect(linked > 0, "messages link to a locked discussion")
            let messages = try S.rows("message", ["body", "discussion_pk"], on: connection)
            let discussions = try S.rows("discussion", ["_entity", "title"], on: connection)
            let failure = #expect(throws: (any Error).self) { try S.migrate(model, allowDataLoss: true, on: connection) }
            let text = failure.map { String(describing: $0) } ?? ""
            #expect(text.contains("check: no rows of message whose required discussion_pk links to rows of LockedDiscussion (removed)"), "\(text)")
            #expect(text.contains("\(linked) rows of message"), "\(text)")
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.rows("message", ["body", "discussion_pk"], on: connection) == messages)
            #expect(try S.rows("discussion", ["_entity", "title"], on: connection) == discussions)
        }
    }

    @Test func renamingARootEntityKeepsItsRowsUnderTheNewName() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: {type: string, optional: false}}, uniquenessConstraints: [[name]]}")),
            ("v2", S.version("Dish: {renamingIdentifier: Recipe, attributes: {name: {type: string, optional: false}}, uniquenessConstraints: [[name]]}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("dish", ["name"], on: connection) == before)
            #expect(try S.rows("dish", ["_entity"], on: connection).allSatisfy { $0[1] == "Dish" })
            // Rows inserted by applications continue the identity and get the entity's name.
            let inserted = try connection.execute("INSERT INTO shop.dish (name) VALUES ('new') RETURNING _pk, _entity")
            #expect(inserted.int(0, "_pk")! > Int64(before.count))
            #expect(inserted.value(0, "_entity") == "Dish")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func renamingASubEntityUpdatesItsRowsOnly() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: {type: string, optional: false}}}")),
            ("v2", S.version("Animal: {attributes: {name: string}}\nHound: {parent: Animal, renamingIdentifier: Dog, attributes: {bark: {type: string, optional: false}}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("animal", ["_entity", "name", "bark"], on: connection)
            try S.migrate(model, on: connection)
            let renamed = before.map { row in row.enumerated().map { $0.offset == 1 && $0.element == "Dog" ? "Hound" : $0.element } }
            #expect(try S.rows("animal", ["_entity", "name", "bark"], on: connection) == renamed)
            #expect(renamed.filter { $0[1] == "Hound" }.count == 300)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
