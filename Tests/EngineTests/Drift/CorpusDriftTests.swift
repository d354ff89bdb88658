import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A store made by `apply` is its version's contract: no drift, for real apps' models, holding
/// rows. Up to nine versions per bundle (the first, the last and evenly spaced ones between:
/// 133 of the corpus's 494), each created and filled in a schema of its own. Migrated stores
/// are checked by every engine test that plans again after `apply` (`StoreMigrator.plan`
/// refuses a drifted store): CorpusRunTests for the corpus's inferable runs.
@Suite(integration) struct CorpusDriftTests {
    static func sampled(_ versions: [ModelVersion]) -> [ModelVersion] {
        let stride = max(1, versions.count / 8)
        var picked = Swift.stride(from: 0, to: versions.count, by: stride).map { versions[$0] }
        if let last = versions.last, picked.last?.name != last.name { picked.append(last) }
        return picked
    }

    @Test(arguments: Corpus.bundles)
    func aStoreMadeByApplyShowsNoDrift(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadEachVersion(path: bundle.fullPath)
        let usable = model.versions.filter { model.problems(ofVersion: $0.name).isEmpty }
        try TestDatabase.withFreshConnection { connection in
            for (index, version) in Self.sampled(usable).enumerated() {
                let store = "store_\(index)"
                try SampleDataTests.createAndFill(model, version: version.name, store: store, rows: 2, on: connection)
                let snapshot = try StoreCatalog.snapshot(store: store, on: connection)
                let report = try #require(try DriftCheck.drift(of: snapshot, model: model, on: connection), "\(bundle) '\(version.name)'")
                #expect(report.version == version.name)
                #expect(report.items.map(\.description) == [], "\(bundle) '\(version.name)'")
                try connection.execute("DROP SCHEMA \(ident: store) CASCADE")
            }
        }
    }
}
