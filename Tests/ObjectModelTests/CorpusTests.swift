import Foundation
import Testing
@testable import ObjectModel

/// Every model version of real apps in ../shared/corpus loads and validates, in the order and
/// with the current version that the corpus index records.
@Suite struct CorpusTests {
    struct Bundle: CustomTestStringConvertible, Sendable {
        var repository: String
        var path: String
        var versions: [String]
        var current: String?
        var testDescription: String { "\(repository)/\(path)" }
    }

    static let bundles: [Bundle] = {
        guard let data = FileManager.default.contents(atPath: Paths.corpus + "/index.json"),
              let index = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let repos = index["repos"] as? [String: [String: Any]]
        else { return [] }
        var result: [Bundle] = []
        for (repository, info) in repos.sorted(by: { $0.key < $1.key }) {
            for (path, model) in ((info["models"] as? [String: [String: Any]]) ?? [:]).sorted(by: { $0.key < $1.key }) {
                let strip = { (name: String) in (name as NSString).deletingPathExtension }
                result.append(Bundle(
                    repository: repository, path: path,
                    versions: ((model["versions"] as? [String]) ?? []).map(strip),
                    current: (model["current"] as? String).map(strip)
                ))
            }
        }
        return result
    }()

    /// Versions rejected on purpose, with the exact reason. Reviewed by hand.
    static let expectedRejections: [String: [String]] = [:]

    @Test func theCorpusIsPresent() {
        #expect(Self.bundles.count >= 10, "expected the corpus at \(Paths.corpus)")
    }

    @Test(arguments: bundles)
    func everyVersionLoadsAndValidates(bundle: Bundle) throws {
        let model = try ModelLoader.load(path: "\(Paths.corpus)/\(bundle.repository)/\(bundle.path)")
        #expect(model.versions.map(\.name) == bundle.versions)
        #expect(model.currentVersionName == (bundle.current ?? bundle.versions.last!))
        for version in model.versions {
            let problems = ModelValidator.validate(version).map { issue in
                issue.description.replacingOccurrences(of: Paths.corpus + "/", with: "")
            }
            let key = "\(bundle.repository)/\(bundle.path)/\(version.name)"
            #expect(problems == (Self.expectedRejections[key] ?? []), "\(key)")
        }
    }
}
