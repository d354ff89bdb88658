import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of an entity moved out of a table that another table's foreign
/// key points at (a toy's animal): the table is still rebuilt beside itself, the key moved to
/// the shadow, the links to moved rows cleared as offline, while the application writes.
/// Proves Planning/Changes: CopyRows, DeleteRows, DetachReferences (with
/// Online/OnlineShadowReferences.swift).
@Suite(integration) struct OnlineShadowReferenceMigrationTests {
    typealias S = MigratedStore
    typealias Moves = OnlineRowMoveMigrationTests

    /// Dog leaves Animal's table; a toy links to an animal (a dog in v1, too), its link to a
    /// dog cleared (a loss `plan` names: `--allow-data-loss`).
    static func model() throws -> VersionedModel {
        let toy = "\nToy: {attributes: {label: string}, relationships: {animal: {destination: Animal}}}"
        return try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}" + toy)),
            ("v2", S.version("Animal: {attributes: {name: string}}\nDog: {attributes: {name: string, bark: string}}" + toy)),
        ])
    }

    /// First-version writes: toys linked and re-pointed to animals and to dogs (rows the
    /// batches passed and rows they had not), inserted and deleted; animals and dogs inserted,
    /// renamed and deleted (the links to them cleared by the keys' delete rule).
    static func writeToys(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        try writeToys(w, connection, pick: w.random(0...8))
    }

    static func writeToys(_ w: TwinWriter, _ connection: PostgresConnection, pick: Int) throws {
        // The sample rows: animals 1-300, dogs 301-600, toys 1-300.
        let animal = w.random(1...650), toy = w.random(1...330)
        let link: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal))" }
        switch pick {
        case 0, 1, 2:
            try w.both({ "UPDATE \(ident: $0, "toy") SET label = coalesce(label, '') || '!', animal_pk = \(link($0)) WHERE _pk = \(literal: toy)" }, on: connection)
        case 3:
            try w.insert(into: "toy", columns: ["_entity", "label", "animal_pk"], values: { "'Toy', 'ball', \(link($0))" }, on: connection)
        case 4:
            try w.both({ "DELETE FROM \(ident: $0, "toy") WHERE _pk = \(literal: toy)" }, on: connection)
        case 5:
            try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
        case 6:
            try w.insert(into: "animal", columns: ["_entity", "name", "bark"], values: { _ in "'Dog', 'rex', 'woof'" }, on: connection)
        case 7:
            try w.insert(into: "animal", columns: ["_entity", "name"], values: { _ in "'Animal', 'cat'" }, on: connection)
        default:
            try w.both({ "UPDATE \(ident: $0, "animal") SET name = coalesce(name, '') || '~' WHERE _pk = \(literal: animal)" }, on: connection)
        }
    }

    @Test func aTablePointedAtIsRebuiltBesideItselfAndTheLinksToMovedRowsEndAsOffline() throws {
        let model = try Self.model()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: Self.writeToys) { connection, writer, _ in
            // The sample links animals only: every third toy is given a dog.
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = _pk + 300 WHERE _pk % 3 = 0" }, on: connection)
            let toDogs = try connection.execute("SELECT count(*) AS n FROM shop.toy t JOIN shop.animal a ON a._pk = t.animal_pk WHERE a._entity = 'Dog'").int(0, "n")!
            let toAnimals = try connection.execute("SELECT count(*) AS n FROM shop.toy t JOIN shop.animal a ON a._pk = t.animal_pk WHERE a._entity = 'Animal'").int(0, "n")!
            #expect(toDogs > 20 && toAnimals > 20, "the sample links prove little: \(toDogs) to dogs, \(toAnimals) to animals")
            let old = try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")!
            try Moves.expectRebuilt(model, on: connection)
            try Moves.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            #expect(try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")! != old, "animal was not rebuilt beside itself")
            try Moves.expectNoShadowLeft(on: connection)
            // The key points at the new animal table, under its name, validated.
            let key = try connection.execute("""
                SELECT conname, confrelid = 'shop.animal'::regclass AS points, convalidated FROM pg_constraint
                WHERE conrelid = 'shop.toy'::regclass AND contype = 'f'
                """).rows
            #expect(key.map { $0.map { $0 ?? "" } } == [["toy_animal_pk_fkey", "t", "t"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.toy WHERE animal_pk IS NOT NULL").int(0, "n")! > 20)
        }
    }

    /// Stopped in the middle of clearing the links to dogs (the toys locked away), finished
    /// with plain `apply` or `--restart`: the triggers and the shadow stay meanwhile; the
    /// finishing run ends as offline and leaves none of them.
    @Test(arguments: [false, true])
    func anInterruptedClearingContinuesAndLeavesNoShadowOrTrigger(restart: Bool) throws {
        // After its first batch (rowsDone counts the links cleared, few here: only the writer links dogs).
        try Self.interruptAtToys(
            try Self.model(), write: Self.writeToys, phase: "clear toy.animal_pk", trigger: "orchestrator_online_unlin", allowDataLoss: true, restart: restart
        )
    }

    /// `Moves.interruptThenFinish`, stopped by a lock on the toys after the first batch of
    /// `phase`: `trigger` (its name's start), the move and mirroring triggers and the shadow
    /// stay while the step is unfinished.
    static func interruptAtToys(
        _ model: VersionedModel, write: @escaping TwinWriter.Write, phase: String, trigger: String, allowDataLoss: Bool = false, restart: Bool = false
    ) throws {
        try Moves.interruptThenFinish(model, write: write, restart: restart, allowDataLoss: allowDataLoss, stop: { blocker, event in
            guard event.kind == .rows, event.phase?.hasPrefix(phase) == true else { return false }
            try blocker.execute("BEGIN; LOCK TABLE shop.toy IN SHARE MODE")
            return true
        }, unfinished: { _, connection in
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_%' ORDER BY 1").rows.compactMap { $0[0] }
            #expect(left.map { String($0.prefix(25)) } == ([trigger, "orchestrator_online_move_", "orchestrator_online_stay_"] + Array(repeating: "orchestrator_online_trunc", count: 2)).sorted(), "the triggers stay while the step is unfinished")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_class WHERE relname LIKE 'orchestrator_online_shadow_%' AND relkind = 'r'").int(0, "n") == 1)
        })
    }

    /// As `model`, with an inverse whose delete rule is `rule` (a toy goes with its animal,
    /// keeps it, …): the rule does not act on the toys linking to moved dogs, the links are
    /// cleared as under `model`. `toyAnimal` adds to the toy's relationship (", optional: false").
    static func cascadingModel(rule: String = "cascade", toyAnimal: String = "") throws -> VersionedModel {
        let animal = "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, inverse: animal, toMany: true, deleteRule: \(rule)}}}"
        let toy = "\nToy: {attributes: {label: string}, relationships: {animal: {destination: Animal, inverse: toys\(toyAnimal)}}}"
        return try S.model([
            ("v1", S.version(animal + "\nDog: {parent: Animal, attributes: {bark: string}}" + toy)),
            ("v2", S.version(animal + "\nDog: {attributes: {name: string, bark: string}}" + toy)),
        ])
    }
}
