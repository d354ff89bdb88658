import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` builds the new store's indexes and foreign keys before the write guard
/// (`OnlineStageThree`): catch-up rounds after the build make rows again under those
/// constraints, and the store still equals an offline migration, constraints valid.
@Suite(integration) struct OnlineStageThreeTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests

    /// Written once the build has committed: a chef renamed (its row made again with the same
    /// key, which recipes link to: a SET NULL acting on it would cut the links), a chef
    /// deleted (its recipes' links cleared by the old store's own SET NULL, logged), recipes
    /// moved to another chef, a recipe deleted, a chef and a recipe inserted.
    static let afterBuild: [SQL] = [
        "UPDATE shop.chef SET name = name || ' after the build' WHERE _pk IN (2, 3)",
        "DELETE FROM shop.chef WHERE _pk = 5",
        "UPDATE shop.recipe SET chef_pk = 3, amount = amount + 7 WHERE _pk IN (30, 31)",
        "DELETE FROM shop.recipe WHERE _pk = 32",
        "INSERT INTO shop.chef (_pk, _entity, name) VALUES (300001, 'Chef', 'late chef')",
        "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (300001, 'Recipe', 'late recipe', 9, 50, 300001)",
    ]

    /// The kitchen store with `writes` applied, migrated offline: rows and catalog.
    static func offline(after writes: [SQL]) throws -> (rows: [[String?]], catalog: [String]) {
        let model = try Kitchen.kitchen()
        var result: ([[String?]], [String]) = ([], [])
        try S.withStore(model) { connection in
            for write in writes { try connection.execute(write) }
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply()
            result = (try Online.snapshot(S.store, on: connection), try S.catalog(of: S.store, on: connection))
        }
        return result
    }

    static func onlineOptions() -> ApplyOptions {
        var options = ApplyOptions()
        options.online = true
        options.catchUpRemainder = 0
        return options
    }

    @Test func rowsWrittenAfterTheBuildAreMappedUnderItsConstraintsAndTheStoreEqualsTheOfflineOne() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var events: [ProgressEvent] = []
            var hookFailure: Error?
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: Self.onlineOptions(), onProgress: { event in
                events.append(event)
                guard event.kind == .passFinished, event.stage == .build else { return }
                do {
                    // The build committed: the foreign keys and indexes are in the staging schema.
                    #expect(try connection.execute("""
                        SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'shop~staging'::regnamespace
                        """).int(0, "n") == 1)
                    for write in Self.afterBuild { try connection.execute(write) }
                } catch {
                    hookFailure = error
                }
            })
            #expect(hookFailure == nil, "\(String(describing: hookFailure))")
            #expect(try S.version(on: connection) == "Kitchen 2")
            let build = try #require(events.firstIndex { $0.kind == .passFinished && $0.stage == .build })
            #expect(events[build...].contains { $0.stage == .catchUp }, "a catch-up round ran after the build")
            let guardTaken = try #require(events.firstIndex { $0.kind == .passFinished && $0.stage == .writeGuard })
            #expect(guardTaken > build)

            // The rows made again kept their links; the deleted chef's recipes lost theirs.
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM shop.recipe AS r JOIN shop.chef AS c ON c._pk = r.author_pk WHERE c.name LIKE '% after the build'
                """).int(0, "n") ?? 0 > 2)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE author_pk = 5").int(0, "n") == 0)
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'shop'::regnamespace AND convalidated
                """).int(0, "n") == 1)
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM pg_constraint WHERE connamespace = 'shop'::regnamespace AND NOT convalidated
                """).int(0, "n") == 0)
            try Online.expectNoTriggersLeft(on: connection)
            #expect(try connection.execute("""
                SELECT to_regclass('shop._touched_rows') IS NULL AND to_regproc('shop._record_touched_row') IS NULL AS gone
                """).bool(0, "gone") == true)

            let reference = try Self.offline(after: Self.afterBuild)
            #expect(try S.catalog(of: S.store, on: connection) == reference.catalog)
            let online = try Online.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference.rows)
        }
    }

    @Test func aLinkLeftPointingNowhereAfterTheBuildStopsTheStepUnderTheGuardWithTheStoreUnchanged() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { (connection: PostgresConnection) throws in
            var hookFailure: Error?
            let failure = #expect(throws: StepFailure.self) {
                _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: Self.onlineOptions(), onProgress: { event in
                    guard event.kind == .passFinished, event.stage == .build else { return }
                    do {
                        // What a round runs as: no foreign key acts; the touched-row log records it.
                        try connection.transaction {
                            try connection.execute("SET LOCAL session_replication_role = replica")
                            try connection.execute("UPDATE \"shop~staging\".recipe SET author_pk = 999999 WHERE _pk = 40")
                        }
                    } catch {
                        hookFailure = error
                    }
                })
            }
            #expect(hookFailure == nil, "\(String(describing: hookFailure))")
            let underlying = failure?.underlying as? PostgresError
            #expect(underlying?.sqlState == .foreignKeyViolation)
            #expect(String(describing: failure).contains("rows of recipe whose author_pk names no row of chef"), "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") ?? 0 > 0)
        }
    }

    /// A role owning the store and the metadata, that may create schemas in the database but
    /// not set `session_replication_role` (not a superuser), for `body`; dropped afterwards.
    static func withOrdinaryOwner(of url: String, admin: PostgresConnection, _ body: (PostgresConnection) throws -> Void) throws {
        let role = "orch_stage3_\(UInt32.random(in: .min ... .max))", password = "Stage3-pw-\(UInt32.random(in: .min ... .max))"
        try admin.execute("CREATE ROLE \(ident: role) LOGIN PASSWORD \(literal: password)")
        defer {
            _ = try? admin.execute("REASSIGN OWNED BY \(ident: role) TO CURRENT_USER")
            _ = try? admin.execute("DROP OWNED BY \(ident: role)")
            _ = try? admin.execute("DROP ROLE IF EXISTS \(ident: role)")
        }
        let database = try admin.execute("SELECT current_database() AS name").value(0, "name") ?? ""
        try admin.execute("GRANT CREATE ON DATABASE \(ident: database) TO \(ident: role)")
        for schema in [S.store, "orchestrator"] {
            try admin.execute("ALTER SCHEMA \(ident: schema) OWNER TO \(ident: role)")
            for table in try admin.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(schema)").rows.compactMap({ $0[0] }) {
                try admin.execute("ALTER TABLE \(ident: schema, table) OWNER TO \(ident: role)")
            }
        }
        let session = try PostgresConnection(url: TestDatabase.connectionString(url, user: role, password: password))
        defer { session.close() }
        try body(session)
    }

    @Test func withoutTheRightToSetReplicationRoleStageThreeRunsWholeUnderTheGuardWithTheSameStore() throws {
        let model = try Kitchen.kitchen()
        try TestDatabase.withFreshDatabase { url in
            let admin = try PostgresConnection(url: url)
            defer { admin.close() }
            try SampleDataTests.createAndFill(model, version: "Kitchen 1", store: S.store, rows: 300, on: admin)
            try MetadataSchema.bootstrap(on: admin)
            try Self.withOrdinaryOwner(of: url, admin: admin) { session in
                #expect(throws: PostgresError.self) { try session.execute("SET session_replication_role = replica") }
                var foreignKeysBeforeTheGuard: Int64?
                _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: session).apply(options: Self.onlineOptions(), onProgress: { event in
                    guard event.kind == .passStarted, event.stage == .writeGuard else { return }
                    foreignKeysBeforeTheGuard = try? admin.execute("""
                        SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'shop~staging'::regnamespace
                        """).int(0, "n")
                })
                #expect(foreignKeysBeforeTheGuard == 0, "nothing was built before the guard")
            }
            #expect(try S.version(on: admin) == "Kitchen 2")
            #expect(try admin.execute("""
                SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'shop'::regnamespace AND convalidated
                """).int(0, "n") == 1)
            let reference = try Self.offline(after: [])
            #expect(try S.catalog(of: S.store, on: admin) == reference.catalog)
            #expect(try Online.snapshot(S.store, on: admin) == reference.rows)
        }
    }
}
