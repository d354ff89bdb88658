import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of an entity moved out of a table that another table's key
/// points at with any delete rule (a toy goes with its animal, or keeps it): the links to
/// moved rows are cleared as offline (a migration runs no delete rule), the table rebuilt
/// beside itself, while the application writes; a required link stops the step at its start
/// and again in the switch-over, naming the rows, nothing lost.
/// Proves Planning/Changes: CopyRows, DeleteRows, DetachReferences, DataCheck (with
/// Online/OnlineShadowTable.swift).
@Suite(integration) struct OnlineMovedRowLinksMigrationTests {
    typealias S = MigratedStore
    typealias Moves = OnlineRowMoveMigrationTests
    typealias Toys = OnlineShadowReferenceMigrationTests

    static let toDogs: SQL = "SELECT count(*) AS n FROM shop.toy t JOIN shop.animal a ON a._pk = t.animal_pk WHERE a._entity = 'Dog'"

    /// First-version writes of `Toys.writeToys` (toys re-pointed to animals and dogs, animals
    /// and dogs inserted and deleted): every toy stays, live as offline.
    @Test(arguments: [("cascade", "c"), ("deny", "r"), ("noAction", "a")])
    func aCascadingOrDenyingKeyClearsTheLinksToMovedRowsBeforeTheSwitchOverAsOffline(rule: String, action: String) throws {
        let model = try Toys.cascadingModel(rule: rule)
        let write: TwinWriter.Write = { w, connection in
            let pick = w.random(0...8)
            guard pick == 5 else { return try Toys.writeToys(w, connection, pick: pick) }
            // Deletes: a denying key refuses those of animals a toy links to, in both stores; a
            // dog deleted once its links are cleared no longer takes its toys along (Limits).
            guard rule == "cascade" else { return try Toys.writeToys(w, connection, pick: 6) }
            let animal = w.random(1...300)
            try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
        }
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: write) { connection, writer, _ in
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = _pk + 300 WHERE _pk % 3 = 0" }, on: connection)
            #expect(try connection.execute(Self.toDogs).int(0, "n")! > 20)
            let toys = try connection.execute("SELECT count(*) AS n FROM shop.toy").int(0, "n")!
            // Online asks for the same consent as offline (the links Dog.toys held), before anything changes.
            let offline = #expect(throws: DataLossNotAllowed.self) { try StoreMigrator(connection: connection, model: model, store: S.store).apply() }
            let online = #expect(throws: DataLossNotAllowed.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(online: true))
            }
            #expect(online?.losses == offline?.losses && online?.losses == ["step 1 of 1 ('v1' -> 'v2') Dog.toys removed: its links are dropped"])
            #expect(try S.version(on: connection) == "v1" && connection.execute("SELECT count(*) AS n FROM shop.toy").int(0, "n") == toys)
            try Self.migrateRebuildingAnimals(model, writer: writer, on: connection) { () throws -> Void in
                // No toy went with a dog: the migrated store has every toy of the first-version copy.
                let count: (String) throws -> Int64? = { try connection.execute("SELECT count(*) AS n FROM \(ident: $0, "toy")").int(0, "n") }
                let (live, copy) = (try count("shop"), try count(Moves.shadow))
                #expect(live == copy && live != nil)
            }
            #expect(try Self.keys(of: "toy", on: connection) == [["toy_animal_pk_fkey", "t", "t", action]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.toy WHERE animal_pk IS NOT NULL").int(0, "n")! > 20)
        }
    }

    /// `apply --online` while `writer` writes: `animal` is rebuilt beside itself, with a short
    /// switch-over, and the store ends as an offline migration of the first-version copy
    /// (`migrated` checks what it holds before that copy is migrated), nothing left behind.
    static func migrateRebuildingAnimals(
        _ model: VersionedModel, writer: TwinWriter, on connection: PostgresConnection, migrated: () throws -> Void = {},
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let old = try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")!
        try Moves.expectRebuilt(model, on: connection, sourceLocation: sourceLocation)
        try Self.expectShortSwitchOver(model, on: connection, sourceLocation: sourceLocation)
        try Moves.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection, sourceLocation: sourceLocation)
        try migrated()
        try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection, sourceLocation: sourceLocation)
        #expect(try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")! != old, "animal was not rebuilt beside itself", sourceLocation: sourceLocation)
        try Moves.expectNoShadowLeft(on: connection, sourceLocation: sourceLocation)
    }

    /// The foreign keys of `table`: name, whether it points at `animal`, validated, delete action.
    static func keys(of table: String, on connection: PostgresConnection) throws -> [[String]] {
        try connection.execute("""
            SELECT conname, confrelid = 'shop.animal'::regclass AS points, convalidated, confdeltype FROM pg_constraint
            WHERE conrelid = \(literal: "shop." + table)::regclass AND contype = 'f'
            """).rows.map { $0.map { $0 ?? "" } }
    }

    /// The switch-over of the step's online plan neither deletes nor reads rows of the old
    /// table: it drops triggers and keys, renames, and drops the old table.
    static func expectShortSwitchOver(_ model: VersionedModel, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
        let switchOver = try #require(step.phases?.phases.last).statements.map(\.sql.text)
        #expect(!switchOver.contains { $0.hasPrefix("DELETE") || $0.hasPrefix("DO") || $0.hasPrefix("UPDATE") }, "\(switchOver)", sourceLocation: sourceLocation)
    }

    /// Toys 3, 6 and 9 must keep their animal, a dog: the step stops at its start naming them
    /// (as offline, before anything changes), the store untouched; relinked, it runs.
    @Test func aRequiredLinkToAMovedRowStopsTheOnlineStepAtItsStartNamingTheRowsAsOffline() throws {
        let model = try Toys.cascadingModel(toyAnimal: ", optional: false")
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: Toys.writeToys) { connection, writer, _ in
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = CASE WHEN _pk IN (3, 6, 9) THEN _pk + 300 ELSE _pk END" }, on: connection)
            let problem = "rows of toy whose required animal_pk links to rows of Dog (moved out of animal)"
            let offline = #expect(throws: StepFailure.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true))
            }
            var phase: String?
            let online = #expect(throws: StepFailure.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, online: true), onProgress: { event in
                    if event.kind == .passStarted, phase == nil { phase = event.phase }
                })
            }
            for error in [offline?.underlying, (online?.underlying as? OnlineInterrupted)?.underlying] {
                #expect((error as? PostgresError)?.message == "3 \(problem); first _pk: 3, 6, 9")
                #expect((error as? PostgresError)?.sqlState == .checkViolation)
            }
            #expect(phase == "check: no " + problem, "the online run stopped in \(phase ?? "no phase")")
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal WHERE _entity = 'Dog'").int(0, "n") == 300)
            #expect(try connection.execute(Self.toDogs).int(0, "n") == 3)
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = _pk WHERE _pk IN (3, 6, 9)" }, on: connection)
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, online: true))
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            try Moves.expectNoShadowLeft(on: connection)
        }
    }

    /// The application links toy 5 to a dog while the step runs, after its start's check:
    /// the switch-over counts the rows again before the dogs leave and stops, naming toy 5;
    /// the write stays, the store at v1. Relinked, plain `apply` finishes as offline.
    @Test func aRequiredLinkWrittenDuringTheStepStopsItInTheSwitchOverNamingTheRows() throws {
        let model = try Toys.cascadingModel(toyAnimal: ", optional: false")
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: Toys.writeToys) { connection, writer, url in
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = _pk" }, on: connection)
            let application = try PostgresConnection(url: url)
            defer { application.close() }
            var (checked, linked) = (false, false)
            let failure = #expect(throws: StepFailure.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, online: true), onProgress: { event in
                    guard event.kind == .passStarted, !linked else { return }
                    if event.phase?.hasPrefix("check: no rows of toy whose required") == true {
                        checked = true
                    } else if checked {
                        for store in ["shop", Moves.shadow] { _ = try? application.execute("UPDATE \(ident: store, "toy") SET animal_pk = 305 WHERE _pk = 5") }
                        linked = true
                    }
                })
            }
            #expect(linked, "the test never linked a toy to a dog during the step")
            let error = (failure?.underlying as? OnlineInterrupted)?.underlying as? PostgresError
            #expect(error?.message == "1 rows of toy whose required animal_pk links to rows of Dog (moved out of animal); first _pk: 5")
            #expect(failure?.statement?.sql.text.hasPrefix("DO") == true)
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT animal_pk FROM shop.toy WHERE _pk = 5").int(0, "animal_pk") == 305)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal WHERE _entity = 'Dog'").int(0, "n") == 300)
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = 5 WHERE _pk = 5" }, on: connection)
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true))
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            try Moves.expectNoShadowLeft(on: connection)
        }
    }

    /// Dog leaves Animal's table; an animal's mother is an animal or a dog, the inverse's
    /// delete rule `rule`.
    static func motherModel(rule: String) throws -> VersionedModel {
        let animal = "Animal: {attributes: {name: string}, relationships: {mother: {destination: Animal, inverse: young}, young: {destination: Animal, inverse: mother, toMany: true, deleteRule: \(rule)}}}"
        return try S.model([
            ("v1", S.version(animal + "\nDog: {parent: Animal, attributes: {bark: string}}")),
            ("v2", S.version(animal + "\nDog: {attributes: {name: string, bark: string}}")),
        ])
    }

    /// First-version writes: mothers set to animals and dogs (rows the batches passed and rows
    /// they had not), animals and dogs inserted with a mother, renamed, and deleted where the
    /// rule clears links (a denying one refuses them, in both stores; a cascade from a dog
    /// deleted once the links to it are cleared reaches nothing: Limits).
    static func writeMothers(deletes: Bool) -> TwinWriter.Write {
        { w, connection in
            // The sample rows: animals 1-300, dogs 301-600.
            let animal = w.random(1...650), mother = w.random(1...650)
            let link: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: mother))" }
            switch w.random(0...(deletes ? 6 : 5)) {
            case 0, 1, 2:
                try w.both({ "UPDATE \(ident: $0, "animal") SET name = coalesce(name, '') || '!', mother_pk = \(link($0)) WHERE _pk = \(literal: animal)" }, on: connection)
            case 3:
                try w.insert(into: "animal", columns: ["_entity", "name", "mother_pk"], values: { "'Animal', 'cat', \(link($0))" }, on: connection)
            case 4:
                try w.insert(into: "animal", columns: ["_entity", "name", "bark", "mother_pk"], values: { "'Dog', 'rex', 'woof', \(link($0))" }, on: connection)
            case 5:
                try w.both({ "UPDATE \(ident: $0, "animal") SET name = coalesce(name, '') || '~' WHERE _pk = \(literal: animal)" }, on: connection)
            default:
                try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
            }
        }
    }

    /// The table's own key: the animals that stay lose their links to dogs, keep the others,
    /// live as offline; the table is rebuilt beside itself, its key pointing at it.
    @Test(arguments: [("nullify", "n"), ("cascade", "c"), ("deny", "r")])
    func anAnimalLinkingToAMovedDogLosesTheLinkWhileTheTableIsRebuiltAsOffline(rule: String, action: String) throws {
        let model = try Self.motherModel(rule: rule)
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: Self.writeMothers(deletes: rule == "nullify")) { connection, writer, _ in
            try writer.both({ "UPDATE \(ident: $0, "animal") SET mother_pk = CASE WHEN _pk % 2 = 0 THEN 601 - _pk ELSE 300 - _pk % 300 END" }, on: connection)
            let toDogs: SQL = "SELECT count(*) AS n FROM shop.animal a JOIN shop.animal m ON m._pk = a.mother_pk WHERE a._entity = 'Animal' AND m._entity = 'Dog'"
            #expect(try connection.execute(toDogs).int(0, "n") == 150)
            try Self.migrateRebuildingAnimals(model, writer: writer, on: connection)
            #expect(try Self.keys(of: "animal", on: connection) == [["animal_mother_pk_fkey", "t", "t", action]])
            // Some links kept, each compared with the offline migration's above; not "more than
            // 100": the writer deletes rows and their links, more the longer a loaded run lasts.
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal WHERE mother_pk IS NOT NULL").int(0, "n")! > 0, "no link kept")
        }
    }
}
