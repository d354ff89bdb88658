import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Real apps' runs applied with `apply --online` while an application writes: for each bundle,
/// its shortest inferable run that applies (CorpusOnlineRunTests runs them all without writer),
/// with CorpusWriter inserting, updating and deleting rows of the entities the run keeps
/// between every two phases. Each write goes to the live store and to a twin left at the first
/// version; migrated offline afterwards, the twin is what the live store must be: every
/// committed write migrated, every deleted row gone, catalog and rows the same.
@Suite(integration) struct CorpusOnlineWriterTests {
    static let live = CorpusOnlineRunTests.live
    static let offline = CorpusOnlineRunTests.offline

    @Test(arguments: Corpus.bundles)
    func theShortestRunAppliesOnlineAsOfflineWhileTheApplicationWrites(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        let runs = InferableRun.runs(of: model).filter { $0.changesTheModel && !$0.needsLinksGeneratedRowsLack }
        guard let run = runs.min(by: { $0.mappings.count < $1.mappings.count }) else { return }
        let context = "\(bundle), run \(run)"
        try Self.check(run, of: model, in: context)
    }

    static func check(_ run: InferableRun, of model: VersionedModel, in context: String) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: run.first.name, store: live, rows: CorpusOnlineRunTests.rowsPerEntity, on: connection)
            try TwinStores.copy(model, version: run.first.name, from: live, to: offline, on: connection)
            let kept = KeptEntity.following(run.mappings, from: run.first, through: Array(run.versions.dropFirst()))
            let targets = Dictionary(grouping: kept, by: \.sourceTable).sorted { $0.key < $1.key }
                .map { CorpusWriter.Target(table: $0.key, entities: $0.value.map(\.sourceName)) }
            let writer = CorpusWriter(url: url, live: live, twin: offline, targets: targets)
            writer.start()
            var options = ApplyOptions(allowDataLoss: true, batchSize: CorpusOnlineRunTests.batchSize)
            options.online = true
            let outcome = Result {
                try StoreMigrator(connection: connection, model: model, store: live, targetVersion: run.last.name)
                    .apply(options: options, onProgress: writer.interleave)
            }
            writer.stop()
            print("CorpusOnlineWriterTests: \(context): \(writer.commits) writes committed, refused: \(writer.refused.sorted { $0.key < $1.key })")
            #expect(writer.unexpected.isEmpty, "\(context): writes failed otherwise than an application's may: \(writer.unexpected.prefix(3))")
            #expect(writer.commits > 0, "\(context): the writer committed nothing: the test proves little")
            _ = try outcome.get()
            _ = try StoreMigrator(connection: connection, model: model, store: offline, targetVersion: run.last.name).apply(options: ApplyOptions(allowDataLoss: true))
            #expect(try TwinStores.version(of: live, on: connection) == run.last.name, "\(context)")
            let differences = try TwinStores.differences(live, offline, on: connection)
            #expect(differences == [], "\(context): the store migrated online while written differs from an offline migration of the final data:\n\(differences.prefix(12).joined(separator: "\n"))")
            #expect(try TwinStores.leftovers(of: live, on: connection) == [], "\(context): left by the online run")
        }
    }
}
