import Foundation
import PostgresClient
import TestSupport

/// A small model, Shop, of four versions written in either format, one of which can be broken:
/// Item(name) -> Item(name, sku) -> Item(name, note) -> Item(title, renamed from name; note).
enum ShopModel: String, CaseIterable, CustomStringConvertible {
    case yaml
    case xcode

    var description: String { rawValue }

    static let versions = ["Shop 1", "Shop 2", "Shop 3", "Shop 4"]

    /// (name, renamed from) per version.
    static let attributes: [String: [(name: String, renamedFrom: String?)]] = [
        "Shop 1": [("name", nil)],
        "Shop 2": [("name", nil), ("sku", nil)],
        "Shop 3": [("name", nil), ("note", nil)],
        "Shop 4": [("title", "name"), ("note", nil)],
    ]

    /// Writes the model in `folder`; `broken` cannot be used: in YAML its file cannot be read,
    /// in Xcode it fails validation (a relationship to an entity it does not have). Returns the
    /// path to pass as `--model`.
    @discardableResult
    func write(in folder: URL, broken: String? = nil) throws -> URL {
        switch self {
        case .yaml:
            let model = folder.appendingPathComponent("Shop")
            try CLITests.write("name: Shop\nversions: [\(Self.versions.joined(separator: ", "))]\n", to: "model.yaml", in: model)
            for version in Self.versions {
                let text = version == broken ? "entities:\n  Item: [unclosed\n" : yamlVersion(Self.attributes[version]!)
                try CLITests.write(text, to: "\(version).yaml", in: model)
            }
            return model
        case .xcode:
            let model = folder.appendingPathComponent("Shop.xcdatamodeld")
            for version in Self.versions {
                try CLITests.write(xcodeContents(Self.attributes[version]!, brokenRelationship: version == broken), to: "\(version).xcdatamodel/contents", in: model)
            }
            try CLITests.write("""
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 4.xcdatamodel</string></dict></plist>
                """, to: ".xccurrentversion", in: model)
            return model
        }
    }

    /// The file of a version, as errors name it.
    func versionFile(_ version: String, in model: URL) -> String {
        switch self {
        case .yaml: model.appendingPathComponent("\(version).yaml").path
        case .xcode: model.appendingPathComponent("\(version).xcdatamodel/contents").path
        }
    }

    /// What is wrong with the broken version, as errors say it.
    var problem: String {
        switch self {
        case .yaml: "malformed YAML"
        case .xcode: "destination entity 'Owner' does not exist"
        }
    }

    private func yamlVersion(_ attributes: [(name: String, renamedFrom: String?)]) -> String {
        "entities:\n  Item:\n    attributes:\n" + attributes.map { attribute in
            "      \(attribute.name): {type: string" + (attribute.renamedFrom.map { ", renamingIdentifier: \($0)" } ?? "") + "}\n"
        }.joined()
    }

    private func xcodeContents(_ attributes: [(name: String, renamedFrom: String?)], brokenRelationship: Bool) -> String {
        let attributeLines = attributes.map { attribute in
            "        <attribute name=\"\(attribute.name)\" optional=\"YES\" attributeType=\"String\"" + (attribute.renamedFrom.map { " elementID=\"\($0)\"" } ?? "") + "/>"
        }
        let relationshipLines = brokenRelationship
            ? ["        <relationship name=\"owner\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Owner\"/>"]
            : []
        return (["<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>",
                 "<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">",
                 "    <entity name=\"Item\" representedClassName=\"Item\" syncable=\"YES\">"]
            + attributeLines + relationshipLines + ["    </entity>", "</model>"]).joined(separator: "\n") + "\n"
    }
}

/// A fresh database with the YAML Shop model written in a temporary folder, for tests that run
/// the CLI on the `shop` store: `run` adds `--model`, `connection` reads and writes the store.
struct ShopSession {
    let url: String
    let connection: PostgresConnection
    let model: String

    func run(_ arguments: [String]) throws -> CLIResult {
        try OrchestratorBinary.run(arguments + ["--model", model], databaseURL: url)
    }

    static func with(_ body: (ShopSession) throws -> Void) throws {
        try TestDatabase.withFreshDatabase { url in
            try withTemporaryFolder { folder in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try body(ShopSession(url: url, connection: connection, model: try ShopModel.yaml.write(in: folder).path))
            }
        }
    }
}
