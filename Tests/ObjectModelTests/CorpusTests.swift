import Foundation
import Testing
import TestSupport
@testable import ObjectModel

/// Every model version of real apps in ../shared/corpus loads and validates, in the order and
/// with the current version that the corpus index records.
@Suite struct CorpusTests {
    @Test func theCorpusIsPresent() {
        #expect(Corpus.bundles.count >= 10, "expected the corpus at \(Corpus.root)")
    }

    @Test(arguments: Corpus.bundles)
    func everyVersionLoadsAndValidates(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.load(path: bundle.fullPath)
        #expect(model.versions.map(\.name) == bundle.versions)
        #expect(model.currentVersionName == (bundle.current ?? bundle.versions.last!))
        for version in model.versions {
            let problems = ModelValidator.validate(version).map { issue in
                issue.description.replacingOccurrences(of: Corpus.root + "/", with: "")
            }
            // Every version of the corpus validates (quirks are read leniently, as warnings).
            #expect(problems == [], "\(bundle)/\(version.name)")
        }
    }
}
