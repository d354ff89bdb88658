import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of an entity moved out of a table that a join table's key points
/// at (a toy's animals, without inverse; Animal's own toys, which Dog no longer has): the links
/// to moved rows are deleted before the switch-over, as the offline delete of the moved rows
/// cascades to them, and the table is rebuilt beside itself, while the application writes.
/// Proves Planning/Changes: CopyRows, DeleteRows (with Online/OnlineShadowTable.swift,
/// OnlineShadowReferences.swift).
@Suite(integration) struct OnlineMovedJoinLinksMigrationTests {
    typealias S = MigratedStore
    typealias Moves = OnlineRowMoveMigrationTests
    typealias Links = OnlineMovedRowLinksMigrationTests

    /// Dog leaves Animal's table; `animal` and `toy` declare the to-many kept in `join`.
    static func model(animal: String, toy: String) throws -> VersionedModel {
        try S.model([
            ("v1", S.version(animal + "\nDog: {parent: Animal, attributes: {bark: string}}\n" + toy)),
            ("v2", S.version(animal + "\nDog: {attributes: {name: string, bark: string}}\n" + toy)),
        ])
    }

    /// First-version writes: links of `join` (`animalColumn` the side pointing at animals and
    /// dogs) added and removed, to rows the batches passed and rows they had not; animals and
    /// dogs inserted and deleted (their links going with them), toys deleted.
    static func writeLinks(join: String, animalColumn: String, toyColumn: String) -> TwinWriter.Write {
        { w, connection in
            // The sample rows: animals 1-300, dogs 301-600, toys 1-300.
            let animal = w.random(1...650), toy = w.random(1...330)
            switch w.random(0...5) {
            case 0, 1, 2:
                try w.both({ """
                    INSERT INTO \(ident: $0, join) (\(ident: toyColumn), \(ident: animalColumn)) \
                    SELECT t._pk, a._pk FROM \(ident: $0, "toy") t, \(ident: $0, "animal") a \
                    WHERE t._pk = \(literal: toy) AND a._pk = \(literal: animal) ON CONFLICT DO NOTHING
                    """ }, on: connection)
            case 3:
                try w.both({ "DELETE FROM \(ident: $0, join) WHERE \(ident: animalColumn) = \(literal: animal)" }, on: connection)
            default:
                // Toys and animals deleted, animals and dogs inserted, as in `writeToys`.
                try OnlineShadowReferenceMigrationTests.writeToys(w, connection, pick: w.random(4...7))
            }
        }
    }

    @Test(arguments: [
        ("Animal: {attributes: {name: string}}", "Toy: {attributes: {label: string}, relationships: {animals: {destination: Animal, toMany: true}}}", "toy__animals", "animals_pk", "toy_pk"),
        ("Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}", "Toy: {attributes: {label: string}}", "animal__toys", "animal_pk", "toys_pk"),
    ])
    func aJoinTablesLinksToMovedRowsGoBeforeTheSwitchOverAsOffline(animal: String, toy: String, join: String, animalColumn: String, toyColumn: String) throws {
        let model = try Self.model(animal: animal, toy: toy)
        let write = Self.writeLinks(join: join, animalColumn: animalColumn, toyColumn: toyColumn)
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: write) { connection, writer, _ in
            try writer.both({ """
                INSERT INTO \(ident: $0, join) (\(ident: toyColumn), \(ident: animalColumn)) \
                SELECT _pk, _pk + 300 FROM \(ident: $0, "toy") WHERE _pk % 3 = 0 ON CONFLICT DO NOTHING
                """ }, on: connection)
            // And 200 links to animals that stay (toy k to animal k), from the start.
            try writer.both({ """
                INSERT INTO \(ident: $0, join) (\(ident: toyColumn), \(ident: animalColumn)) \
                SELECT _pk, _pk FROM \(ident: $0, "toy") WHERE _pk % 3 <> 0 ON CONFLICT DO NOTHING
                """ }, on: connection)
            let toDogs: SQL = "SELECT count(*) AS n FROM \(ident: S.store, join) l JOIN shop.animal a ON a._pk = l.\(ident: animalColumn) WHERE a._entity = 'Dog'"
            #expect(try connection.execute(toDogs).int(0, "n")! >= 100)
            try Links.migrateRebuildingAnimals(model, writer: writer, on: connection)
            // Links to animals that stay are kept (each compared with the offline migration's
            // above). Not "more than 100": the writer deletes toys and animals with their links,
            // and a run slowed on a loaded machine let it write thousands of times (900 links
            // before, 170 after, 3,914 writes, in one run here).
            let kept = try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, join)").int(0, "n")!
            #expect(kept > 0, "no link to an animal that stays was kept")
            let key = try connection.execute("""
                SELECT conname, convalidated FROM pg_constraint WHERE conrelid = \(literal: "shop." + join)::regclass AND contype = 'f'
                AND confrelid = 'shop.animal'::regclass
                """).rows
            #expect(key.map { $0.map { $0 ?? "" } } == [["\(join)_\(animalColumn)_fkey", "t"]])
        }
    }
}
