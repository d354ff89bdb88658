import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of steps that move rows between tables while the application
/// writes: an entity moved out of its hierarchy (its rows and the links to them), rows of a
/// removed entity deleted with the links to them, a one-to-one whose column changes sides.
/// Each ends equal to an offline migration of the final data, catalog and rows.
@Suite(integration) struct OnlineRowMoveMigrationTests {
    typealias S = MigratedStore
    static let shadow = OnlineMigrationTests.shadow

    /// Dog leaves Animal's table for its own; Owner links to dogs (a to-one of Dog, kept in the
    /// rows that move, and a to-one of Owner pointing at them, which keeps its values).
    static func movedEntity() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Animal: {attributes: {name: string}}
                Dog: {parent: Animal, attributes: {bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
                Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
                """)),
            ("v2", S.version("""
                Animal: {attributes: {name: string}}
                Dog: {attributes: {name: string, bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
                Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
                """)),
        ])
    }

    /// First-version writes on every table: dogs and animals inserted, updated (owner and
    /// favourite links too) and deleted, over keys the batches passed and keys they had not.
    static func writeAnimals(_ w: GuardedWriter, _ connection: PostgresConnection) throws {
        let animal = w.random(1...700), owner = w.random(1...330)
        switch w.random(0...7) {
        case 0:
            try w.insert(into: "animal", columns: ["_entity", "name", "bark", "owner_pk"], values: {
                "'Dog', 'rex', 'woof', (SELECT _pk FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner))"
            }, on: connection)
        case 1:
            try w.insert(into: "animal", columns: ["_entity", "name"], values: { _ in "'Animal', 'cat'" }, on: connection)
        case 2, 3:
            try w.both({ """
                UPDATE \(ident: $0, "animal") SET name = name || '!', bark = CASE WHEN _entity = 'Dog' THEN coalesce(bark, '') || 'f' END,
                owner_pk = CASE WHEN _entity = 'Dog' THEN (SELECT _pk FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner)) END WHERE _pk = \(literal: animal)
                """ }, on: connection)
        case 4:
            try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
        case 5:
            try w.both({ """
                UPDATE \(ident: $0, "owner") SET name = name || '~',
                favourite_pk = (SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal) AND _entity = 'Dog') WHERE _pk = \(literal: owner)
                """ }, on: connection)
        case 6:
            try w.both({ "DELETE FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner)" }, on: connection)
        default:
            try w.insert(into: "owner", columns: ["_entity", "name", "favourite_pk"], values: {
                "'Owner', 'ann', (SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal) AND _entity = 'Dog')"
            }, on: connection)
        }
    }

    @Test func anEntityMovedOutOfItsHierarchyKeepsEveryWriteMadeWhileItsRowsMove() throws {
        let model = try Self.movedEntity()
        try GuardedWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writeAnimals) { connection, writer, _ in
            try Self.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            // New dogs continue after the largest _pk moved, written meanwhile included.
            let largest = try connection.execute("SELECT max(_pk) AS n FROM shop.dog").int(0, "n")!
            #expect(try connection.execute("INSERT INTO shop.dog (name) VALUES ('Rex') RETURNING _pk").int(0, "_pk")! > largest)
        }
    }

    /// Stopped at the first foreign key after the rows were copied: the mirroring trigger
    /// stays and keeps the rows written meanwhile right; a plain `apply` continues and ends
    /// as offline.
    @Test func anInterruptedMoveContinuesWithPlainApplyAndLeavesNoTrigger() throws {
        let model = try Self.movedEntity()
        try GuardedWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writeAnimals) { connection, writer, url in
            writer.start()
            writer.waitForCommits(5)
            let blocker = try PostgresConnection(url: url)
            defer { blocker.close() }
            try blocker.execute("BEGIN; LOCK TABLE shop.owner IN ROW EXCLUSIVE MODE")
            let failure = #expect(throws: StepFailure.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store)
                    .apply(options: ApplyOptions(lockTimeoutMilliseconds: 1000, lockRetries: 1, batchSize: 7, online: true))
            }
            try blocker.execute("ROLLBACK")
            #expect(failure?.statement?.summary.hasPrefix("foreign key") == true, "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "v1")
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_move_%'").rows
            #expect(left.count == 1, "the mirroring trigger stays while the step is unfinished")
            // Writes while no run is active: the trigger left behind keeps them right.
            let interrupted = writer.commits
            writer.waitForCommits(interrupted + 10)
            #expect(writer.commits >= interrupted + 10, "the writer barely wrote while the step was unfinished")
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(batchSize: 7))
            writer.stop()
            #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))")
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// Runs `apply --online` while `writer` writes, and checks it wrote meanwhile, unharmed.
    static func migrateWhileWriting(
        _ model: VersionedModel, writer: GuardedWriter, allowDataLoss: Bool = false, on connection: PostgresConnection,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan().steps.first)
        #expect(step.online?.refusals == [], sourceLocation: sourceLocation)
        writer.start()
        writer.waitForCommits(5)
        let before = writer.commits
        let report = try StoreMigrator(connection: connection, model: model, store: S.store)
            .apply(options: ApplyOptions(allowDataLoss: allowDataLoss, batchSize: 7, online: true))
        let during = writer.commits - before
        writer.stop()
        print("online migration: \(during) writer transactions committed while apply --online ran, \(writer.commits) in all")
        #expect(report.appliedSteps.count == 1, sourceLocation: sourceLocation)
        #expect(during >= 20, "the writer barely wrote during the migration: the test proves little", sourceLocation: sourceLocation)
        #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))", sourceLocation: sourceLocation)
    }
}
