import Foundation
import Testing
import ObjectModel
import Planning
import TestSupport

/// `apply --online` on real apps' histories: every consecutive pair of every corpus bundle that
/// inference accepts and that runs in place has an online form (`plan --online` would not
/// refuse it). The rows themselves are proven by the Online*MigrationTests on the rules these
/// pairs use; this pins that no real pair falls outside them.
@Suite struct CorpusOnlineTests {
    @Test(arguments: Corpus.bundles)
    func everyInferablePairPlansOnline(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadEachVersion(path: bundle.fullPath)
        var planned = 0
        for (from, to) in zip(bundle.versions, bundle.versions.dropFirst()) {
            guard let source = model.version(named: from), let destination = model.version(named: to),
                  model.problems(ofVersion: from).isEmpty, model.problems(ofVersion: to).isEmpty,
                  case .inferable(let mapping) = MappingInference.infer(from: source, to: destination) else { continue }
            let step = try LightweightMigration.step(for: mapping, from: source, to: destination, schema: "store")
            let online = try #require(step.phases, "\(bundle) \(from) -> \(to): a lightweight step without an online plan")
            #expect(online.refusals == [], "\(bundle) \(from) -> \(to)")
            #expect(online.phases.last?.summary.hasPrefix("switch over") == true, "\(bundle) \(from) -> \(to): the last phase is not the switch-over")
            planned += 1
        }
        // As many pairs as the reviewed inference verdicts call inferable: a loader or inference
        // regression that planned fewer would otherwise pass here.
        let verdicts = try String(contentsOfFile: CorpusInferenceTests.expectationFile, encoding: .utf8)
        let inferable = verdicts.split(separator: "\n").filter { $0.hasPrefix("\(bundle.repository)/\(bundle.path): ") && $0.hasSuffix(": inferable") }
        #expect(planned == inferable.count, "\(bundle): \(planned) pairs planned, \(inferable.count) inferable in corpus-inference.txt")
    }
}
