import Foundation

enum Paths {
    /// The repository's root, found from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let migrations = repository + "/migrations"
    static let fixtures = repository + "/Tests/ObjectModelTests/Fixtures"
    /// Real apps' models, beside the repository (../shared/corpus).
    static let corpus = URL(fileURLWithPath: repository).deletingLastPathComponent().appendingPathComponent("shared/corpus").path
}
