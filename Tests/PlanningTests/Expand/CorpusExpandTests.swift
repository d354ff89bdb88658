import Testing
import ObjectModel
import Planning
import TestSupport

/// The old version's views for every consecutive pair of every bundle of real apps' models that
/// inference accepts: generated (a view per old table, one statement at least each), or refused
/// with every reason naming what it refuses. On rows: `CorpusViewTests` (EngineTests).
@Suite struct CorpusExpandTests {
    @Test(arguments: Corpus.bundles)
    func everyInferablePairIsServedOrRefusedWithItsReasons(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        for (source, target) in zip(model.versions, model.versions.dropFirst()) {
            guard let mapping = MappingInference.infer(from: source, to: target).mapping else { continue }
            do {
                let views = try OldVersionViews(mapping: mapping, from: source, to: target, store: "s")
                let tables = StoreLayout(version: source, schema: "s").tables.map(\.name)
                #expect(Set(views.viewNames).isSubset(of: Set(tables)), "\(bundle), \(source.name) -> \(target.name)")
                #expect(views.statements.count >= 2 + views.viewNames.count)
            } catch {
                #expect(!error.refusals.isEmpty, "\(bundle), \(source.name) -> \(target.name)")
                for refusal in error.refusals {
                    #expect(refusal.message.count > 20 && !refusal.message.contains("\n"), "\(bundle): \(refusal)")
                }
            }
        }
    }
}
