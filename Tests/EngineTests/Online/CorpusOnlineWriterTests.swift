import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Real apps' runs applied with `apply --online` while an application writes: every inferable
/// run of every bundle that applies (as CorpusOnlineRunTests, which runs them without writer),
/// with a corpus writer (`CorpusWrites`) inserting, updating and deleting rows of the entities the run keeps
/// between every two phases. Each write goes to the live store and to a twin at the version the
/// running step starts from: after each step the twin is migrated offline to the same version,
/// the writer paused from the step's switch-over until then, so a write made while the live
/// store is at a version follows that version's rules in both (at the first version
/// throughout, the twin applied the first version's delete rules to writes made at later ones,
/// and differed where a later version changed one). Migrated offline, the twin is what the live store must be: every committed
/// write migrated, every deleted row gone, catalog and rows the same.
/// Proves Planning/Changes: the online form of every kind the corpus pairs plan.
@Suite(integration) struct CorpusOnlineWriterTests {
    static let live = CorpusOnlineRunTests.live
    static let offline = CorpusOnlineRunTests.offline

    @Test(arguments: Corpus.bundles)
    func everyRunAppliesOnlineAsOfflineWhileTheApplicationWrites(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        let runs = InferableRun.runs(of: model).filter { $0.changesTheModel && !$0.needsLinksGeneratedRowsLack }
        for run in runs {
            try Self.check(run, of: model, in: "\(bundle), run \(run)")
        }
    }

    static func check(_ run: InferableRun, of model: VersionedModel, in context: String) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: run.first.name, store: live, rows: CorpusOnlineRunTests.rowsPerEntity, on: connection)
            try TwinStores.copy(model, version: run.first.name, from: live, to: offline, on: connection)
            let kept = KeptEntity.following(run.mappings, from: run.first, through: Array(run.versions.dropFirst()))
            let targets = Dictionary(grouping: kept, by: \.sourceTable).sorted { $0.key < $1.key }
                .map { CorpusWrites.Target(table: $0.key, entities: $0.value.map(\.sourceName)) }
            let writer = CorpusWrites.writer(url: url, live: live, twin: offline, targets: targets)
            writer.start()
            var options = ApplyOptions(allowDataLoss: true, batchSize: CorpusOnlineRunTests.batchSize)
            options.online = true
            let twinConnection = try PostgresConnection(url: url)
            defer { twinConnection.close() }
            // The twin runs the live run's steps, one by one: a step between two versions of
            // equal hashes (ObvMessenger 18 -> 19 drops a uniqueness constraint, which no hash
            // covers) is one `apply --to` would call up to date.
            let twinMigrator = StoreMigrator(connection: twinConnection, model: model, store: offline, targetVersion: run.last.name)
            let twinPlan = try twinMigrator.plan()
            var twinFailure: Error?
            let outcome = Result {
                try StoreMigrator(connection: connection, model: model, store: live, targetVersion: run.last.name)
                    .apply(options: options, onProgress: { event in
                        writer.interleaveAttempt(event)
                        // From the switch-over to the twin's step, no write: one committed in
                        // between would meet the live store at the new version, the twin at the old.
                        if event.kind == .passStarted, event.stage == .online, event.phase?.hasPrefix("switch over") == true { writer.pause() }
                        guard event.kind == .stepFinished, twinFailure == nil else { return }
                        writer.pause()
                        defer { writer.resume() }
                        do {
                            let step = twinPlan.steps[event.step - 1]
                            #expect(step.to == event.to && twinPlan.steps.count == event.stepCount, "\(context): the twin's plan differs")
                            _ = try twinMigrator.run(step, number: event.step, of: event.stepCount, plan: twinPlan, options: ApplyOptions(allowDataLoss: true))
                        } catch { twinFailure = error }
                    })
            }
            writer.stop()
            #expect(twinFailure == nil, "\(context): the twin's offline migration failed: \(String(describing: twinFailure))")
            print("CorpusOnlineWriterTests: \(context): \(writer.commits) writes committed, refused: \(writer.refused.sorted { $0.key < $1.key })")
            #expect(writer.unexpected.isEmpty, "\(context): writes failed otherwise than an application's may: \(writer.unexpected.prefix(3))")
            #expect(writer.commits > 0, "\(context): the writer committed nothing: the test proves little")
            _ = try outcome.get()
            _ = try StoreMigrator(connection: connection, model: model, store: offline, targetVersion: run.last.name).apply(options: ApplyOptions(allowDataLoss: true))
            #expect(try TwinStores.version(of: live, on: connection) == run.last.name, "\(context)")
            let differences = try TwinComparison.differences(live, offline, on: connection)
            #expect(differences == [], "\(context): the store migrated online while written differs from an offline migration of the final data:\n\(differences.prefix(12).joined(separator: "\n"))")
            #expect(try TwinStores.leftovers(of: live, on: connection) == [], "\(context): left by the online run")
        }
    }
}
