import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` clears the links to rows that leave a table (rows of a removed
/// entity, rows of an entity moved out of it) before the switch-over, while the application,
/// still on the old version, may delete the rows they linked to. The key's delete rule keeps
/// acting on the links cleared (`ClearedLinks`): a toy goes with its dog under CASCADE, a
/// denying key refuses the dog's delete, so the store equals an offline migration of the
/// final data, row by row.
/// Proves Planning/Changes: DetachReferences, DeleteRows (with Online/OnlineClearedLinks.swift).
@Suite(integration) struct OnlineClearedLinkRuleTests {
    typealias S = MigratedStore
    typealias Moves = OnlineRowMoveMigrationTests
    typealias Toys = OnlineShadowReferenceMigrationTests

    static let rules = [("cascade", "c"), ("deny", "r"), ("noAction", "a"), ("nullify", "n")]

    /// Dog is removed: its rows are deleted, the toys' links to them cleared.
    static func removedDogs(rule: String) throws -> VersionedModel {
        let animal = "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, inverse: animal, toMany: true, deleteRule: \(rule)}}}"
        let toy = "\nToy: {attributes: {label: string}, relationships: {animal: {destination: Animal, inverse: toys}}}"
        return try S.model([
            ("v1", S.version(animal + "\nDog: {parent: Animal, attributes: {bark: string}}" + toy)),
            ("v2", S.version(animal + toy)),
        ])
    }

    @Test(arguments: rules)
    func deletingARemovedRowKeepsTheDeleteRuleOnTheLinksClearedToIt(rule: String, action: String) throws {
        try Self.migrateDeletingDogs(try Self.removedDogs(rule: rule), rule: rule, action: action, phase: "clear toy.animal_pk where it links to rows of Dog (removed)")
    }

    @Test(arguments: rules)
    func deletingAMovedRowKeepsTheDeleteRuleOnTheLinksClearedToIt(rule: String, action: String) throws {
        try Self.migrateDeletingDogs(
            try Toys.cascadingModel(rule: rule), rule: rule, action: action, phase: "clear toy.animal_pk where it links to rows of Dog (moved out of animal)"
        )
    }

    /// Every third toy links to a dog. While `apply --online` runs, the writer writes toys and
    /// animals and deletes animals and dogs (`deleteInBoth`); once the links to dogs are
    /// cleared (`phase` finished), three dogs that toys link to are deleted: under CASCADE the
    /// toys go, under a denying key the delete fails as PostgreSQL's key fails it, under
    /// SET NULL the dogs go. The store then equals an offline migration of the final data.
    static func migrateDeletingDogs(_ model: VersionedModel, rule: String, action: String, phase: String) throws {
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Moves.shadow, write: Self.writeToysDeletingAnimals) { connection, writer, url in
            try writer.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = _pk + 300 WHERE _pk % 3 = 0" }, on: connection)
            let application = try PostgresConnection(url: url)
            defer { application.close() }
            var outcomes: [(toy: Int, outcome: Outcome, left: Int)] = []
            var (cleared, failure): (Bool, Error?) = (false, nil)
            writer.start()
            writer.waitForCommits(5)
            let report = try StoreMigrator(connection: connection, model: model, store: S.store).apply(
                options: ApplyOptions(allowDataLoss: true, batchSize: 7, online: true),
                onProgress: { event in
                    writer.interleave(event, untilCommitted: 20, since: 0)
                    guard event.kind == .passFinished, event.phase?.hasPrefix(phase) == true else { return }
                    cleared = true
                    do { outcomes = try Self.deleteLinkedDogs(writer: writer, on: application) } catch { failure = error }
                }
            )
            writer.stop()
            #expect(report.appliedSteps.count == 1)
            #expect(cleared, "no phase '\(phase)' ran")
            #expect(failure == nil, "the dogs' deletes failed: \(String(describing: failure))")
            #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))")
            #expect(writer.commits >= 20, "the writer barely wrote: the test proves little")
            #expect(outcomes.count == 3, "\(outcomes)")
            for (toy, outcome, left) in outcomes {
                switch rule {
                case "cascade":
                    #expect(outcome == .deleted && left == 0, "toy \(toy): \(outcome), \(left) left")
                case "nullify":
                    #expect(outcome == .deleted && left == 1, "toy \(toy): \(outcome), \(left) left")
                default:
                    #expect(outcome == .denied(Self.denial(action: action)) && left == 1, "toy \(toy): \(outcome), \(left) left")
                }
            }
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            try Moves.expectNoShadowLeft(on: connection)
            let key = try connection.execute("SELECT confdeltype FROM pg_constraint WHERE conrelid = 'shop.toy'::regclass AND contype = 'f'").rows
            #expect(key == [[action]])
        }
    }

    static func denial(action: String) -> String {
        "update or delete on table \"animal\" violates foreign key constraint \"toy_animal_pk_fkey\" on table \"toy\""
    }

    /// Three dogs (three different ones) that toys link to in the old version (the shadow store), their links cleared
    /// in the live store, deleted by the application: (toy, what became of the dog's delete,
    /// whether the toy is left in the live store).
    ///
    /// The toys are locked as the writer writes them, the live store's row first, then the
    /// shadow's (`FOR UPDATE OF l, t`, in one statement, so a toy the writer changed meanwhile
    /// is read again, in both stores, once it committed): `FOR UPDATE OF t, l` took the shadow's
    /// row first, and a writer between its live and its shadow update of the same toy then
    /// deadlocked with this session, which PostgreSQL aborted (reproduced in psql: a session
    /// holding toy 3's live update, the query waiting on it, the session's shadow update:
    /// "deadlock detected" in the query with `OF t, l`; with `OF l, t` the query waits, then
    /// returns the toy). The live dog is locked too (`d`, after the toys): CI once saw a dog
    /// `.gone` from the live store by the time this session deleted it, its toy gone with it
    /// (the store still equal to the offline migration); locked, a dog another session deletes
    /// meanwhile is either skipped here or waits for this delete. A deadlock left (a writer's delete cascading to a toy locked here
    /// while this session deletes its dog) is retried, as an application retries one between
    /// its own sessions, up to five attempts (a test never loops unbounded).
    static func deleteLinkedDogs(writer: TwinWriter, on connection: PostgresConnection) throws -> [(toy: Int, outcome: Outcome, left: Int)] {
        for _ in 1..<5 {
            do {
                return try connection.transaction { try deleteLinkedDogsOnce(writer: writer, on: connection) }
            } catch let error as PostgresError where error.sqlState == .deadlockDetected {
                continue
            }
        }
        return try connection.transaction { try deleteLinkedDogsOnce(writer: writer, on: connection) }
    }

    private static func deleteLinkedDogsOnce(writer: TwinWriter, on connection: PostgresConnection) throws -> [(toy: Int, outcome: Outcome, left: Int)] {
        let pairs = try connection.execute("""
            SELECT t._pk AS toy, t.animal_pk AS dog FROM \(ident: writer.twin, "toy") t JOIN \(ident: writer.live, "toy") l ON l._pk = t._pk
            JOIN \(ident: writer.twin, "animal") a ON a._pk = t.animal_pk JOIN \(ident: writer.live, "animal") d ON d._pk = t.animal_pk
            WHERE a._entity = 'Dog' AND l.animal_pk IS NULL ORDER BY t._pk LIMIT 12 FOR UPDATE OF l, t, d
            """).rows.compactMap { row in row[0].flatMap { Int($0) }.flatMap { toy in row[1].flatMap { Int($0) }.map { (toy, $0) } } }
        return try distinctDogs(pairs).map { toy, dog in
            let outcome = try deleteInBoth(writer: writer, animal: dog, on: connection)
            let left = try connection.execute("SELECT count(*) AS n FROM \(ident: writer.live, "toy") WHERE _pk = \(literal: toy)").int(0, "n").map { Int($0) } ?? -1
            return (toy, outcome, left)
        }
    }

    /// The first three pairs whose dogs differ: the writer links toys to any animal, so two toys
    /// may link to one dog, and the second delete of that dog would find it gone (CI once saw
    /// "toy 6: .gone, 0 left", its dog deleted with an earlier toy's under CASCADE).
    static func distinctDogs(_ pairs: [(Int, Int)]) -> [(Int, Int)] {
        var seen = Set<Int>()
        return Array(pairs.filter { seen.insert($0.1).inserted }.prefix(3))
    }

    enum Outcome: Equatable {
        case deleted
        case denied(String)
        /// Not in the live store (the step deleted it, or another write): not deleted in either.
        case gone
    }

    /// The application deletes an animal, in the live store and then, as it went there, in
    /// the shadow store: both must delete it or both refuse it, with the same message.
    static func deleteInBoth(writer: TwinWriter, animal: Int, table: String = "animal", on connection: PostgresConnection) throws -> Outcome {
        func delete(in store: String) throws -> Outcome {
            try connection.execute("SAVEPOINT one_delete")
            do {
                let rows = try connection.execute("DELETE FROM \(ident: store, table) WHERE _pk = \(literal: animal) RETURNING _pk").rows
                try connection.execute("RELEASE SAVEPOINT one_delete")
                return rows.isEmpty ? .gone : .deleted
            } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
                try connection.execute("ROLLBACK TO SAVEPOINT one_delete")
                return .denied(error.message)
            }
        }
        let live = try delete(in: writer.live)
        guard live != .gone else { return .gone }
        let shadow = try delete(in: writer.twin)
        guard live == shadow else { throw Mismatch(animal: animal, live: live, shadow: shadow) }
        return live
    }

    struct Mismatch: Error, CustomStringConvertible {
        var animal: Int
        var live: Outcome
        var shadow: Outcome
        var description: String { "deleting animal \(animal): live \(live), offline \(shadow)" }
    }

    /// `Toys.writeToys`, its animals' deletes made through `deleteInBoth`, half of them of a
    /// dog that a toy links to at the start.
    static func writeToysDeletingAnimals(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        let pick = w.random(0...9)
        if pick <= 3 {
            // A toy linked or inserted: the link's row may be deleted by the step meanwhile (a removed dog): the live store
            // refuses the write on the foreign key, the application's write is undone in both.
            try connection.execute("SAVEPOINT one_link")
            do {
                try Toys.writeToys(w, connection, pick: pick)
                try connection.execute("RELEASE SAVEPOINT one_link")
            } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
                try connection.execute("ROLLBACK TO SAVEPOINT one_link")
            }
            return
        }
        guard pick >= 8 else { return try Toys.writeToys(w, connection, pick: pick == 5 ? 8 : pick) }
        let animal = pick == 8 ? 300 + 3 * w.random(1...100) : w.random(1...650)
        _ = try deleteInBoth(writer: w, animal: animal, on: connection)
    }
}
