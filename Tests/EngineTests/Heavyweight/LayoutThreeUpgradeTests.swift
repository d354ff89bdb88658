import Foundation
import Planning
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Planning
@testable import Engine

/// Issue 21: metadata layout 4 keeps every checkpoint in `orchestrator.checkpoints`. A store
/// the previous release (layout 3) left half migrated — a heavyweight run's passes (offline, or
/// online with its row log) in
/// `<store>~staging._checkpoint`, an online run's position in the table
/// `orchestrator.online_progress` — is upgraded in place by the next `apply`, which continues
/// the run and finishes it. The metadata is put back exactly as that release made it, by its
/// own DDL (`LayoutThreeFixture`).
@Suite(integration) struct LayoutThreeUpgradeTests {
    typealias S = MigratedStore

    /// The previous release's checkpoint table, made in the staging schema with the change log.
    static let layoutThreeCheckpointTable = LayoutThreeFixture.checkpointTable(staging: "shop~staging")

    /// The previous release's identity of a heavyweight step's work (`HeavyweightRun.fingerprint`).
    static func layoutThreeFingerprint(of step: PlannedStep) -> String {
        let parts = step.passes.flatMap { pass in pass.statements.map(\.sql.text) + [pass.stream.map { $0.sourceRows.text + ($0.policy ?? "") } ?? ""] }
            + (step.staged?.stageThree.map { ($0.build + $0.guarded).map(\.sql.text) } ?? [])
        return VersionHash.digest(of: ([step.from ?? "", step.to] + parts).joined(separator: "\u{1}"))
    }

    /// The metadata as the previous release made it (`LayoutThreeFixture`: its own DDL), with
    /// its `online_progress` table when `onlineProgress`; the staging schema without the write
    /// log that came later.
    static func backToLayoutThree(on connection: PostgresConnection, onlineProgress: Bool = false) throws {
        try LayoutThreeFixture.metadata(on: connection, onlineProgress: onlineProgress)
        try LayoutThreeFixture.staging("shop~staging", on: connection)
        let shape = try LayoutThreeFixture.shape(on: connection)
        #expect(shape.contains("controls.paused boolean not null") && !shape.contains { $0.hasPrefix("controls.postponed") })
        #expect(!shape.contains { $0.hasPrefix("checkpoints.") || $0.hasPrefix("runs.") || $0.hasPrefix("expansions.") })
    }

    static func expectLayoutFourWithNoCheckpointLeft(on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try connection.execute("SELECT value FROM orchestrator.meta WHERE key = 'layout_version'").value(0, "value") == "4", sourceLocation: sourceLocation)
        #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints").int(0, "n") == 0, sourceLocation: sourceLocation)
        #expect(try connection.execute("SELECT relkind::text AS kind FROM pg_class WHERE oid = 'orchestrator.online_progress'::regclass").value(0, "kind") == "v", sourceLocation: sourceLocation)
        #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.online_progress").int(0, "n") == 0, sourceLocation: sourceLocation)
    }

    @Test func anOfflineHeavyweightRunInterruptedByThePreviousReleaseResumesAfterItsPassesAndFinishes() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Recording"
        let recorder = PolicyMigrationTests.Recorder()
        recorder.failRelationships = true
        try S.withStore(model, rows: 50) { connection in
            try connection.execute("UPDATE shop.recipe SET name = 'recipe ' || _pk")
            let links = try HeavyweightMigrationTests.links(schema: S.store, column: "chef_pk", on: connection)
            let migrator = PolicyMigrationTests.migrator(model, mapping, ["Recording": { PolicyMigrationTests.RecordingPolicy(recorder) }], on: connection)
            _ = #expect(throws: StepFailure.self) { try migrator.apply() }
            let step = try #require(try migrator.plan().steps.first)
            #expect(step.earlierDigests.first == Self.layoutThreeFingerprint(of: step), "the previous release's identity is still known")
            #expect(step.digest.count == 64 && step.digest != Self.layoutThreeFingerprint(of: step))

            // The three passes done, as the previous release recorded them, in the staging schema.
            try connection.execute(SQL(unsafeRaw: Self.layoutThreeCheckpointTable))
            try connection.execute("""
                INSERT INTO "shop~staging"."_checkpoint" (pass, name, fingerprint, rows, changes_seen, table_rows, finished_at)
                SELECT pass, name, \(Self.layoutThreeFingerprint(of: step)), rows, changes_seen, table_rows, updated_at
                FROM orchestrator.checkpoints WHERE store = 'shop' AND kind = 'heavyweight' AND pass > 0
                """)
            try Self.backToLayoutThree(on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\"._checkpoint").int(0, "n") == 3)
            // plan reads them where that release kept them, writing nothing.
            #expect(try migrator.plan().steps.first?.staged?.passesDone == 3)
            #expect(try connection.execute("SELECT value FROM orchestrator.meta WHERE key = 'layout_version'").value(0, "value") == "3")

            recorder.failRelationships = false
            recorder.calls = []
            var events: [ProgressEvent] = []
            _ = try migrator.apply(onProgress: { events.append($0) })
            #expect(events.filter { $0.kind == .passFinished }.map(\.resumed) == [true, true, true, false, false, false])
            #expect(recorder.calls == Array(repeating: "createRelationships", count: 50) + ["endRelationshipCreation", "performCustomValidation", "end"])
            #expect(try S.version(on: connection) == "Kitchen 2")
            let after = try connection.execute("SELECT r.name AS recipe, c.name AS chef FROM shop.recipe r LEFT JOIN shop.chef c ON c._pk = r.author_pk ORDER BY r.name").rows
            #expect(after.count == 50)
            let chefsAfter: [String] = after.compactMap { $0[1] }.sorted()
            let chefsBefore: [String] = links.compactMap { $0[1] }.sorted()
            #expect(chefsAfter == chefsBefore, "each recipe keeps its chef")
            #expect(try connection.execute("SELECT to_regclass('shop._checkpoint') IS NULL AS gone").bool(0, "gone") == true)
            try Self.expectLayoutFourWithNoCheckpointLeft(on: connection)
        }
    }

    @Test func anOnlineHeavyweightRunOfThePreviousReleaseResumesItsPassesMapsTheWritesSinceAndFinishes() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        typealias Online = OnlineHeavyweightTests
        try S.withStore(model) { connection in
            try Online.crashOnlineRun(model, on: connection)
            let migrator = HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection)
            let step = try #require(try migrator.plan(mode: .online).steps.first)
            let layoutThreeDigest = try #require(step.earlierDigests.first)
            #expect(layoutThreeDigest != step.digest)
            // The passes done, as that release recorded them in the staging schema, and its metadata.
            try connection.execute(SQL(unsafeRaw: Self.layoutThreeCheckpointTable))
            try connection.execute("""
                INSERT INTO "shop~staging"."_checkpoint" (pass, name, fingerprint, rows, changes_seen, table_rows, finished_at)
                SELECT pass, name, \(layoutThreeDigest), rows, changes_seen, table_rows, updated_at
                FROM orchestrator.checkpoints WHERE store = 'shop' AND kind = 'heavyweight' AND pass > 0
                """)
            let done = try #require(try connection.execute(#"SELECT count(*) AS n FROM "shop~staging"._checkpoint"#).int(0, "n"))
            #expect(done >= 2)
            try Self.backToLayoutThree(on: connection)
            // The application writes meanwhile: the crashed run's row triggers log it.
            for write in Online.duringStageOne { try connection.execute(write) }

            var events: [ProgressEvent] = []
            var options = ApplyOptions()
            options.online = true
            _ = try migrator.apply(options: options, onProgress: { events.append($0) })
            #expect(events.filter { $0.kind == .passFinished && $0.resumed }.count == Int(done), "the passes of the previous release's run were skipped")
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Online.expectNoTriggersLeft(on: connection)
            #expect(try Online.snapshot(S.store, on: connection) == Online.offlineMigration(after: Online.duringStageOne).migrated)
            try Self.expectLayoutFourWithNoCheckpointLeft(on: connection)
        }
    }

    @Test func aStagingSchemaOfThePreviousReleaseHoldingAnotherPlansPassesIsStillRefused() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Recording"
        let recorder = PolicyMigrationTests.Recorder()
        recorder.failRelationships = true
        try S.withStore(model, rows: 20) { connection in
            let migrator = PolicyMigrationTests.migrator(model, mapping, ["Recording": { PolicyMigrationTests.RecordingPolicy(recorder) }], on: connection)
            _ = #expect(throws: StepFailure.self) { try migrator.apply() }
            try connection.execute(SQL(unsafeRaw: Self.layoutThreeCheckpointTable))
            try connection.execute("""
                INSERT INTO "shop~staging"."_checkpoint" (pass, name, fingerprint, rows, changes_seen, table_rows)
                SELECT pass, name, 'another plan', rows, changes_seen, table_rows FROM orchestrator.checkpoints WHERE store = 'shop' AND pass > 0
                """)
            try Self.backToLayoutThree(on: connection)
            #expect(try migrator.plan().steps.first?.staged?.passesDone == 0)
            recorder.failRelationships = false
            let mismatch = try #require(throws: StagingMismatch.self) { try migrator.apply() }
            #expect(mismatch.reason == "holds passes of another migration plan of this store (the model, mapping model or options changed since)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            // The upgrade moved the rows, under the identity they carried.
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = 'shop' AND pass > 0 AND step_digest = 'another plan'").int(0, "n") == 3)
        }
    }

    @Test func anOnlineRunInterruptedByThePreviousReleaseContinuesFromItsNextBatchAndFinishes() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            let migrator = StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store)
            var options = BatchRunnerTests.options()
            options.betweenBatches = [Answer(after: 5, decision: .stop(reason: "stopped by the test"))]
            _ = #expect(throws: StepFailure.self) { try migrator.apply(options: options) }
            let step = try #require(try migrator.plan().steps.first)
            let online = try #require(step.phases)
            // What the previous release recorded: SHA-256 of the phases' SQL.
            let layoutThreeDigest = VersionHash.digest(of: online.digestedText)
            #expect(step.earlierDigests.first == layoutThreeDigest && step.digest != layoutThreeDigest)
            let position = try connection.execute("SELECT pass, next_key FROM orchestrator.checkpoints WHERE store = 'shop' AND kind = 'online'")
            let phase = try #require(position.int(0, "pass")), nextKey = try #require(position.int(0, "next_key"))
            try Self.backToLayoutThree(on: connection, onlineProgress: true)
            try connection.execute("""
                INSERT INTO orchestrator.online_progress (store, from_version, to_version, plan_digest, phase, next_key)
                VALUES ('shop', 'v1', 'v2', \(layoutThreeDigest), \(phase), \(nextKey))
                """)
            #expect(try BatchRunnerTests.backfilled(on: connection) == 5)

            var events: [ProgressEvent] = []
            _ = try migrator.apply(options: BatchRunnerTests.options(), onProgress: { events.append($0) })
            #expect(events.filter { $0.kind == .rows && $0.stage == .online }.map(\.rowsDone) == [5, 10, 15], "it continued after the first batch")
            #expect(events.contains { $0.kind == .passFinished && $0.resumed == true })
            #expect(try BatchRunnerTests.backfilled(on: connection) == 20)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.item WHERE rating IS NULL").int(0, "n") == 0)
            #expect(try S.version(on: connection) == "v2")
            try Self.expectLayoutFourWithNoCheckpointLeft(on: connection)
        }
    }

    @Test func theUpgradeMovesAnInterruptedOnlineRunAndKeepsOnlineProgressReadableAsAView() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            let migrator = StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store)
            var options = BatchRunnerTests.options()
            options.betweenBatches = [Answer(after: 10, decision: .stop(reason: "stopped by the test"))]
            _ = #expect(throws: StepFailure.self) { try migrator.apply(options: options) }
            let fnv = try #require(try migrator.plan().steps.first?.earlierDigests.last)
            try Self.backToLayoutThree(on: connection, onlineProgress: true)
            try connection.execute("""
                INSERT INTO orchestrator.online_progress (store, from_version, to_version, plan_digest, phase, next_key, updated_at)
                VALUES ('shop', 'v1', 'v2', \(fnv), 1, 11000000, '2026-11-01 00:00:00+00')
                """)
            // A plan of the store before the upgrade sees the run in layout 3's table.
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection).map { [$0.from, $0.to] } == ["v1", "v2"])

            try MetadataSchema.bootstrap(on: connection)
            let moved = try connection.execute("""
                SELECT kind, pass, step_digest, from_version, to_version, next_key, updated_at = '2026-11-01 00:00:00+00' AS kept FROM orchestrator.checkpoints
                """)
            #expect(moved.rows == [["online", "1", fnv, "v1", "v2", "11000000", "t"]])
            let view = try connection.execute("SELECT store, from_version, to_version, plan_digest, phase, next_key FROM orchestrator.online_progress")
            #expect(view.rows == [["shop", "v1", "v2", fnv, "1", "11000000"]])
            #expect(try connection.execute("SELECT value FROM orchestrator.meta WHERE key = 'layout_version'").value(0, "value") == "4")
            try MetadataSchema.bootstrap(on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints").int(0, "n") == 1, "upgrading again changes nothing")
        }
    }
}
