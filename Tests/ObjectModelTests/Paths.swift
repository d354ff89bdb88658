import Foundation

enum Paths {
    /// The repository's root, found from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let migrations = repository + "/migrations"
    static let fixtures = repository + "/Tests/ObjectModelTests/Fixtures"
    /// Real apps' models: `$ORCHESTRATOR_CORPUS`, else ../shared/corpus beside the repository,
    /// else the workplace's /work/shared/corpus (for clones made elsewhere).
    static let corpus: String = {
        if let path = ProcessInfo.processInfo.environment["ORCHESTRATOR_CORPUS"], !path.isEmpty { return path }
        let beside = URL(fileURLWithPath: repository).deletingLastPathComponent().appendingPathComponent("shared/corpus").path
        if FileManager.default.fileExists(atPath: beside + "/index.json") { return beside }
        return "/work/shared/corpus"
    }()
}
