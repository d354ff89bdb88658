import Foundation
import ObjectModel

enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func model(_ relativePath: String) throws -> VersionedModel {
        try ModelLoader.loadValidated(path: repository + "/" + relativePath)
    }

    static var library: ModelVersion {
        get throws { try model("Tests/Fixtures/Library").currentVersion }
    }
}
