import Foundation

enum Paths {
    /// The repository's root, found from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let migrations = repository + "/migrations"
    static let fixtures = repository + "/Tests/ObjectModelTests/Fixtures"
}
