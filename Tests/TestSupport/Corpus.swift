import Foundation

/// Real apps' Core Data models in ../shared/corpus, as listed by its index.json.
public enum Corpus {
    public struct Bundle: Sendable, CustomStringConvertible {
        public var repository: String
        /// The `.xcdatamodeld` path inside the repository folder.
        public var path: String
        /// Version names, oldest first.
        public var versions: [String]
        /// The current version named by `.xccurrentversion`; nil when the bundle has none.
        public var current: String?
        public var fullPath: String { Corpus.root + "/" + repository + "/" + path }
        public var description: String { repository + "/" + path }
    }

    /// `$ORCHESTRATOR_CORPUS`, else ../shared/corpus beside the repository, else /work/shared/corpus.
    public static let root: String = {
        if let path = ProcessInfo.processInfo.environment["ORCHESTRATOR_CORPUS"], !path.isEmpty { return path }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let beside = repository.deletingLastPathComponent().appendingPathComponent("shared/corpus").path
        if FileManager.default.fileExists(atPath: beside + "/index.json") { return beside }
        return "/work/shared/corpus"
    }()

    public static let bundles: [Bundle] = {
        guard let data = FileManager.default.contents(atPath: root + "/index.json"),
              let index = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let repos = index["repos"] as? [String: [String: Any]]
        else { return [] }
        var result: [Bundle] = []
        for (repository, info) in repos.sorted(by: { $0.key < $1.key }) {
            for (path, model) in ((info["models"] as? [String: [String: Any]]) ?? [:]).sorted(by: { $0.key < $1.key }) {
                let versions = ((model["versions"] as? [String]) ?? []).map { ($0 as NSString).deletingPathExtension }
                let current = (model["current"] as? String).map { ($0 as NSString).deletingPathExtension }
                result.append(Bundle(repository: repository, path: path, versions: versions, current: current))
            }
        }
        return result
    }()
}
