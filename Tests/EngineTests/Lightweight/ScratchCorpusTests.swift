import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

@Suite(integration) struct ScratchCorpusTests {
    @Test(arguments: Corpus.bundles)
    func pairs(bundle: Corpus.Bundle) throws {
        guard let model = try? ModelLoader.loadValidated(path: bundle.fullPath) else { return }
        try TestDatabase.withFreshConnection { connection in
        for index in model.versions.indices.dropLast() {
            let source = model.versions[index], target = model.versions[index + 1]
            guard MappingInference.infer(from: source, to: target).isInferable else { continue }
            if VersionHash.hashes(of: source).model == VersionHash.hashes(of: target).model { continue }
            let pair = "\(bundle) \(source.name) -> \(target.name)"
            do {
                let store = "pair_\(index)"
                do {
                    try SampleDataTests.createAndFill(model, version: source.name, store: store, rows: 20, on: connection)
                } catch { print("FILL FAILED \(pair): \(error)"); return }
                let migrator = StoreMigrator(connection: connection, model: model, store: store, targetVersion: target.name)
                let plan = try migrator.plan()
                if !plan.blockers.isEmpty { print("BLOCKED \(pair): \(plan.blockers)"); return }
                do {
                    _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
                } catch { Issue.record("APPLY FAILED \(pair): \(error)"); return }
                let fresh = "fresh_\(index)"
                _ = try StoreMigrator(connection: connection, model: model, store: fresh, targetVersion: target.name).apply()
                let migrated = try MigratedStore.catalog(of: store, on: connection)
                let expected = try MigratedStore.catalog(of: fresh, on: connection)
                let extra = migrated.filter { !expected.contains($0) }, missing = expected.filter { !migrated.contains($0) }
                if !extra.isEmpty || !missing.isEmpty { Issue.record("CATALOG \(pair): extra \(extra) missing \(missing)") }
                print("OK \(pair) \(plan.steps.first?.statements.count ?? 0) statements")
            }
        }
        }
    }
}
