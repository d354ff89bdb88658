import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step: an application keeps writing the old store through
/// the passes; every committed write reaches the new store through the mapping model, and the
/// store equals an offline migration of the final data, row by row.
@Suite(integration) struct OnlineHeavyweightTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    /// Writes on chefs already copied (pass 2 done) and recipes not reached yet (pass 3 next).
    static let duringStageOne: [SQL] = [
        "UPDATE shop.chef SET name = name || ' renamed' WHERE _pk IN (2, 3)",
        "UPDATE shop.recipe SET chef_pk = NULL WHERE chef_pk = 4",
        "DELETE FROM shop.chef WHERE _pk = 4",
        "INSERT INTO shop.chef (_pk, _entity, name) VALUES (100001, 'Chef', 'hook chef')",
        "UPDATE shop.recipe SET amount = amount + 1000 WHERE _pk IN (10, 11)",
        "DELETE FROM shop.recipe WHERE _pk = 12",
        "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (100001, 'Recipe', 'hook recipe', 5, 212, 100001)",
    ]

    /// What the concurrent writer commits, in order, on rows the other writes leave alone:
    /// inserts, updates (of old rows and of its own) and deletes on both tables.
    static let concurrent: [SQL] = (0..<20).flatMap { i -> [SQL] in
        let key = 200_000 + i
        var writes: [SQL] = [
            "INSERT INTO shop.chef (_pk, _entity, name) VALUES (\(unsafeRaw: String(key)), 'Chef', 'writer chef \(unsafeRaw: String(i))')",
            "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (\(unsafeRaw: String(key)), 'Recipe', 'writer recipe', \(unsafeRaw: String(i)), 100.5, \(unsafeRaw: String(key)))",
            "UPDATE shop.recipe SET name = name || ' w', amount = amount + 1, chef_pk = \(unsafeRaw: String(key)) WHERE _pk = \(unsafeRaw: String(150 + i))",
            "UPDATE shop.chef SET name = name || ' w' WHERE _pk = \(unsafeRaw: String(150 + i))",
        ]
        if i > 0 { writes.append("UPDATE shop.recipe SET amount = amount * 2 WHERE _pk = \(unsafeRaw: String(key - 1))") }
        if i % 4 == 0 {
            writes.append("UPDATE shop.recipe SET chef_pk = NULL WHERE chef_pk = \(unsafeRaw: String(250 + i))")
            writes.append("DELETE FROM shop.chef WHERE _pk = \(unsafeRaw: String(250 + i))")
            writes.append("DELETE FROM shop.recipe WHERE _pk = \(unsafeRaw: String(260 + i))")
        }
        if i % 5 == 4 { writes.append("DELETE FROM shop.recipe WHERE _pk = \(unsafeRaw: String(key - 2))") }
        return writes
    }

    /// Between the catch-up rounds: one write left for the last round, under the write guard.
    static let betweenRounds: [SQL] = ["UPDATE shop.recipe SET temperature = 32 WHERE _pk = 20"]

    /// The migrated rows: chefs by name (new keys differ by when a row was associated),
    /// recipes by their kept key with their author's name.
    static func snapshot(_ schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT name FROM \(ident: schema, "chef") ORDER BY name").rows
            + connection.execute("""
                SELECT r._pk, r.name, r.total_cost, r.temperature_c, c.name AS author
                FROM \(ident: schema, "recipe") AS r LEFT JOIN \(ident: schema, "chef") AS c ON c._pk = r.author_pk ORDER BY r._pk
                """).rows
    }

    /// The kitchen mapping; with `sharedChefs`, recipes also make chefs, so that the chef
    /// table is filled by two entity mappings and gets new keys through the association table.
    static func mapping(sharedChefs: Bool) -> MappingModel {
        var mapping = Kitchen.kitchenMapping()
        if sharedChefs {
            mapping.entityMappings.append(EntityMappingDefinition(
                name: "RecipeToChef", type: .transform, sourceEntity: "Recipe", destinationEntity: "Chef",
                attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: "$source.name")]
            ))
        }
        return mapping
    }

    static func sourceSnapshot(_ schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT _pk, name FROM \(ident: schema, "chef") ORDER BY _pk").rows
            + connection.execute("SELECT _pk, name, amount, temperature, chef_pk FROM \(ident: schema, "recipe") ORDER BY _pk").rows
    }

    /// The kitchen store with `writes` applied, migrated offline: the reference.
    static func offlineMigration(after writes: [SQL], sharedChefs: Bool = false) throws -> (source: [[String?]], migrated: [[String?]]) {
        let model = try Kitchen.kitchen()
        var result: ([[String?]], [[String?]]) = ([], [])
        try S.withStore(model) { connection in
            for write in writes { try connection.execute(write) }
            let source = try sourceSnapshot(S.store, on: connection)
            _ = try Kitchen.migrator(model, mapping(sharedChefs: sharedChefs), on: connection).apply()
            result = (source, try snapshot(S.store, on: connection))
        }
        return result
    }

    static func expectNoTriggersLeft(on connection: PostgresConnection) throws {
        #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname LIKE '\\_orchestrator\\_%'").int(0, "n") == 0)
        #expect(try connection.execute("SELECT count(*) AS n FROM pg_proc WHERE proname IN ('_record_change', '_record_row_change')").int(0, "n") == 0)
    }

    @Test(arguments: [(false, false), (true, false), (false, true)])
    func everyWriteDuringTheStepReachesTheNewStore(streaming: Bool, sharedChefs: Bool) throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var migrator = Kitchen.migrator(model, Self.mapping(sharedChefs: sharedChefs), on: connection)
            migrator.forceStreaming = streaming
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, Self.concurrent), first: "ChefToChef", duringStageOne: Self.duringStageOne,
                last: "RecipeToRecipe", betweenRounds: Self.betweenRounds
            )
            let (report, _) = try script.apply(migrator, on: connection)
            #expect(report.appliedSteps.map(\.step.kind) == [.heavyweight])
            #expect(try S.version(on: connection) == "Kitchen 2")

            // Every committed write is there, mapped: totalCost is amount, Celsius from Fahrenheit.
            #expect(try connection.execute("""
                SELECT r.total_cost, r.temperature_c, c.name FROM shop.recipe AS r JOIN shop.chef AS c ON c._pk = r.author_pk WHERE r._pk = 100001
                """).rows == [["5", "100", "hook chef"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE _pk IN (12, 260, 264)").int(0, "n") == 0)
            if !sharedChefs { #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE _pk IN (4, 250, 254)").int(0, "n") == 0) }
            #expect(try connection.execute("SELECT temperature_c FROM shop.recipe WHERE _pk = 20").value(0, "temperature_c") == "0")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE name LIKE 'writer chef %'").int(0, "n") == 20)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE name LIKE '% renamed'").int(0, "n") == 2)
            // New rows after the swap take keys after every row written meanwhile.
            try connection.execute("INSERT INTO shop.chef (_entity, name) VALUES ('Chef', 'after the swap')")
            #expect(try connection.execute("""
                SELECT (SELECT _pk FROM shop.chef WHERE name = 'after the swap') > (SELECT max(_pk) FROM shop.chef WHERE name <> 'after the swap') AS later
                """).bool(0, "later") == true)
            try connection.execute("DELETE FROM shop.chef WHERE name = 'after the swap'")
            try Self.expectNoTriggersLeft(on: connection)

            let final = try Self.sourceSnapshot("shop~", on: connection)
            let online = try Self.snapshot(S.store, on: connection)
            let reference = try Self.offlineMigration(after: Self.duringStageOne + Self.concurrent + Self.betweenRounds, sharedChefs: sharedChefs)
            #expect(final == reference.source, "the reference store holds the same final data")
            TwinComparison.expectSameRows(online, reference.migrated)
        }
    }

    /// `apply --online` whose session is killed once the chefs are copied, as in a crash.
    static func crashOnlineRun(_ model: VersionedModel, on connection: PostgresConnection) throws {
        try crashOnlineRun(after: "ChefToChef", on: connection) { Kitchen.migrator(model, Kitchen.kitchenMapping(), on: $0) }
    }

    /// `apply --online` of the migrator `make` gives, its session killed once the first pass of
    /// `entityMapping` is done.
    static func crashOnlineRun(after entityMapping: String, on connection: PostgresConnection, _ make: (PostgresConnection) throws -> StoreMigrator) throws {
        var options = ApplyOptions()
        options.online = true
        try crashOnlineRun(options: options, on: connection, make) { $0.kind == .passFinished && $0.entityMapping == entityMapping }
    }

    /// `apply` with `options` of the migrator `make` gives on a session of its own, which is
    /// killed, as in a crash, at the first progress event `crashesAt` accepts (`onEvent` sees
    /// each event first); expects the run to fail. Returns whether the session was killed.
    @discardableResult
    static func crashOnlineRun(
        options: ApplyOptions, on connection: PostgresConnection, _ make: (PostgresConnection) throws -> StoreMigrator,
        onEvent: (ProgressEvent) -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation, crashesAt: (ProgressEvent) -> Bool
    ) throws -> Bool {
        let session = try connection.reconnect()
        defer { session.close() }
        let pid = try session.execute("SELECT pg_backend_pid() AS pid").int(0, "pid") ?? 0
        let migrator = try make(session)
        var killed = false
        #expect(throws: StepFailure.self, sourceLocation: sourceLocation) {
            _ = try migrator.apply(options: options, onProgress: { event in
                onEvent(event)
                guard !killed, crashesAt(event) else { return }
                killed = true
                _ = try? connection.execute("SELECT pg_terminate_backend(\(Int(pid)))")
            })
        }
        return killed
    }

    @Test func anOnlineStepInterruptedWhileTheStoreIsWrittenResumesAndMapsTheWritesAgain() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try Self.crashOnlineRun(model, on: connection)
            #expect(try S.version(on: connection) == "Kitchen 1")
            // The crashed run left its row triggers: the application's writes are logged.
            for write in Self.duringStageOne { try connection.execute(write) }
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\"._row_changes").int(0, "n") ?? 0 > 0)

            // Without --online the logged writes stop the resume; online, they are mapped again.
            #expect(throws: StagingMismatch.self) { _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply() }
            var events: [ProgressEvent] = []
            var options = ApplyOptions()
            options.online = true
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: options, onProgress: { events.append($0) })
            #expect(events.contains { $0.kind == .passFinished && $0.resumed }, "the passes of the first run were skipped")
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Self.expectNoTriggersLeft(on: connection)
            #expect(try Self.snapshot(S.store, on: connection) == Self.offlineMigration(after: Self.duringStageOne).migrated)
        }
    }

    @Test func restartAfterACrashedOnlineStepLeavesNoTriggerOnTheStore() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try Self.crashOnlineRun(model, on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname = '_orchestrator_row'").int(0, "n") == 2)
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: ApplyOptions(restart: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Self.expectNoTriggersLeft(on: connection)
        }
    }

    @Test func aStepWithACustomPolicyDeclaringNoHooksRunsOnlineAsOffline() throws {
        var reference: [[String?]] = []
        try S.withStore(try Kitchen.kitchen(), rows: 20) { connection in
            _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply()
            reference = try Self.snapshot(S.store, on: connection)
        }
        try S.withStore(try Kitchen.kitchen(), rows: 20) { connection in
            let migrator = try ResumeTrustTests.migrator(failing: false, on: connection)
            #expect(try migrator.plan().steps.first?.staged?.catchUp?.rerunWhole == ["RecipeToRecipe"])
            var options = ApplyOptions()
            options.online = true
            _ = try migrator.apply(options: options)
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Self.snapshot(S.store, on: connection) == reference)
            try Self.expectNoTriggersLeft(on: connection)
        }
    }
}
