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

    /// An `.xcmappingmodel` package, found on disk, with the source and destination versions
    /// index.json lists for it.
    public struct MappingPackage: Sendable, CustomStringConvertible {
        /// Relative to the corpus root: `<repository folder>/<name>.xcmappingmodel`.
        public var path: String
        public var indexedSource: String?
        public var indexedDestination: String?
        public var repository: String { String(path.prefix { $0 != "/" }) }
        public var fullPath: String { Corpus.root + "/" + path }
        public var description: String { path }
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

    public static let mappingPackages: [MappingPackage] = {
        let index = (FileManager.default.contents(atPath: root + "/index.json"))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let repos = index?["repos"] as? [String: [String: Any]] ?? [:]
        let found = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".xcmappingmodel") }
            .sorted()
        return found.map { path in
            let repository = String(path.prefix { $0 != "/" })
            let inRepository = String(path.dropFirst(repository.count + 1)) + "/xcmapping.xml"
            let entry = (repos[repository]?["mapping_models"] as? [String: [String: Any]])?[inRepository]
            let version = { (key: String) in (entry?[key] as? String).map { ($0 as NSString).deletingPathExtension } }
            return MappingPackage(path: path, indexedSource: version("source"), indexedDestination: version("destination"))
        }
    }()
}
