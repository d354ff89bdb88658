import Foundation
import Testing
import ObjectModel

/// A version that cannot be read or validated is set aside with its problems; the others load,
/// and only a caller that needs it is stopped by it.
@Suite struct UnusableVersionTests {
    static func withFolder<T>(_ files: [String: String], _ body: (String) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unusable-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, text) in files {
            let path = (folder as NSString).appendingPathComponent(name)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        return try body(folder)
    }

    static let nativeFiles = [
        "model.yaml": "name: Shop\nversions: [v1, v2, v3, v4]\n",
        "v1.yaml": "entities:\n  Item:\n    attributes:\n      name: string\n",
        "v2.yaml": "entities:\n  Item: [unclosed\n",
        "v3.yaml": "entities:\n  Item:\n    relationships:\n      owner: {destination: Owner}\n",
        "v4.yaml": "entities:\n  Item:\n    attributes:\n      name: string\n      note: string\n",
    ]

    @Test func aNativeVersionThatCannotBeReadIsSetAsideAndTheOthersLoad() throws {
        try Self.withFolder(Self.nativeFiles) { folder in
            let model = try ModelLoader.loadEachVersion(path: folder)
            #expect(model.versionNames == ["v1", "v2", "v3", "v4"])
            #expect(model.versions.map(\.name) == ["v1", "v3", "v4"])
            #expect(model.unusableVersions.map(\.name) == ["v2"])
            #expect(model.unusableVersion(named: "v2")?.issues.first?.description.hasPrefix(folder + "/v2.yaml:3: malformed YAML") == true)
            // The strict loader still refuses the whole model, naming the file.
            let error = #expect(throws: ModelLoadError.self) { try ModelLoader.load(path: folder) }
            #expect(error?.description.hasPrefix(folder + "/v2.yaml") == true)
        }
    }

    @Test func onlyTheVersionsNamedAreChecked() throws {
        try Self.withFolder(Self.nativeFiles) { folder in
            let model = try ModelLoader.loadEachVersion(path: folder)
            try model.requireUsable(["v1", "v4"])
            let unreadable = #expect(throws: ModelLoadError.self) { try model.requireUsable(["v1", "v2"]) }
            #expect(unreadable?.issues.map(\.file) == [folder + "/v2.yaml"])
            let invalid = #expect(throws: ModelLoadError.self) { try model.requireUsable(["v3"]) }
            #expect(invalid?.description == folder + "/v3.yaml: entity Item, property owner: destination entity 'Owner' does not exist")
        }
    }

    @Test func theUnusableVersionsOnTheWayAreListedInOrder() throws {
        try Self.withFolder(Self.nativeFiles) { folder in
            let model = try ModelLoader.loadEachVersion(path: folder)
            #expect(model.unusableVersions(from: "v1", to: "v4").map(\.name) == ["v2", "v3"])
            #expect(model.unusableVersions(from: "v4", to: "v4").isEmpty)
            #expect(model.unusableVersions(from: "v3", to: "v4").map(\.name) == ["v3"])
        }
    }

    @Test func aVersionThatFailsValidationNeverMatchesAStoreHash() throws {
        try Self.withFolder(Self.nativeFiles) { folder in
            let model = try ModelLoader.loadEachVersion(path: folder)
            let invalidHash = VersionHash.hashes(of: model.version(named: "v3")!).model
            let match = model.usableVersion(withModelHash: invalidHash)
            #expect(match.version == nil)
            #expect(match.notCompared.map(\.name) == ["v2", "v3"])
            let goodHash = VersionHash.hashes(of: model.version(named: "v4")!).model
            #expect(model.usableVersion(withModelHash: goodHash).version?.name == "v4")
        }
    }

    @Test func anXcodeVersionWhoseContentsCannotBeReadIsSetAside() throws {
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """
        let current = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 2.xcdatamodel</string></dict></plist>
            """
        let files = [
            "Shop.xcdatamodeld/Shop.xcdatamodel/contents": contents,
            "Shop.xcdatamodeld/Shop 2.xcdatamodel/contents": String(contents.prefix(120)),
            "Shop.xcdatamodeld/Shop 3.xcdatamodel/contents": contents,
            "Shop.xcdatamodeld/.xccurrentversion": current,
        ]
        try Self.withFolder(files) { folder in
            let model = try ModelLoader.loadEachVersion(path: folder + "/Shop.xcdatamodeld")
            #expect(model.versionNames == ["Shop", "Shop 2", "Shop 3"])
            #expect(model.versions.map(\.name) == ["Shop", "Shop 3"])
            // The current version is named even when it cannot be used; a command needing it stops.
            #expect(model.currentVersionName == "Shop 2")
            #expect(model.warnings.isEmpty)
            let error = #expect(throws: ModelLoadError.self) { try model.requireUsable([model.currentVersionName]) }
            #expect(error?.description.hasPrefix(folder + "/Shop.xcdatamodeld/Shop 2.xcdatamodel/contents") == true)
        }
    }
}
