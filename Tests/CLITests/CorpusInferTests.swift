import Foundation
@testable import OrchestratorCLI
import Testing
import TestSupport

/// `orchestrator infer` answers for every consecutive pair of versions of every corpus bundle
/// (issue 8): exit 0 (inferable) or 1 with its reasons, never a load error.
///
/// Every pair runs in process through the command's own code (`InferCommand` parsed from its
/// arguments, the model loaded by its options, `answer(in:)`, the text rendering), with each
/// bundle read once: about 470 binary runs would each read a whole bundle again (WooCommerce
/// has 117 versions). The built binary runs on a sample: the last pair of the first bundle (by
/// path) of each repository.
@Suite("infer on the corpus")
struct CorpusInferTests {
    static let bundlesWithPairs = Corpus.bundles.filter { $0.versions.count > 1 }
    static let sample = bundlesWithPairs.filter { bundle in bundlesWithPairs.first { $0.repository == bundle.repository }?.path == bundle.path }

    @Test("every consecutive pair gets an answer from the infer command", arguments: bundlesWithPairs)
    func everyPairGetsAnAnswer(bundle: Corpus.Bundle) throws {
        let pairs = Array(zip(bundle.versions, bundle.versions.dropFirst()))
        let model = try InferCommand.parse(["--model", bundle.fullPath, "--from", pairs[0].0, "--to", pairs[0].1])
            .modelOptions.loadEachVersion()
        for (from, to) in pairs {
            let command = try InferCommand.parse(["--model", bundle.fullPath, "--from", from, "--to", to])
            do {
                let result = try command.answer(in: model)
                let lines = InferRendering.text(result, from: from, to: to)
                if !result.isInferable {
                    #expect(lines.first == "'\(from)' -> '\(to)': not inferable; a mapping model is needed", "\(bundle)")
                    #expect(lines.count > 1 && lines.dropFirst().allSatisfy { $0.hasPrefix("  refused: ") }, "\(bundle): \(from) -> \(to) refused without a reason")
                }
            } catch {
                Issue.record("\(bundle): \(from) -> \(to): no answer: \(error)")
            }
        }
    }

    @Test("the binary answers the last pair of a bundle of each repository with exit 0 or 1 and its reasons", arguments: sample)
    func theBinaryAnswersTheLastPair(bundle: Corpus.Bundle) throws {
        let (from, to) = (bundle.versions[bundle.versions.count - 2], bundle.versions[bundle.versions.count - 1])
        let result = try OrchestratorBinary.run(["infer", "--model", bundle.fullPath, "--from", from, "--to", to])
        #expect(result.stderr.isEmpty, "\(bundle): \(result)")
        switch result.exitCode {
        case 0: #expect(result.stdoutLines.first?.hasPrefix("'\(from)' -> '\(to)': inferable") == true, "\(bundle): \(result)")
        case 1: #expect(result.stdoutLines.dropFirst().first?.hasPrefix("  refused: ") == true, "\(bundle): \(result)")
        default: Issue.record("\(bundle): exit \(result.exitCode): \(result)")
        }
    }
}
