import Foundation
import Testing
@testable import ObjectModel

@Suite struct VersionHashTests {
    static let yaml = """
        versionIdentifiers: ["1.0"]
        entities:
          Shape:
            abstract: true
            attributes:
              name: {type: string, optional: false}
          Circle:
            parent: Shape
            className: CircleClass
            attributes:
              radius: {type: double, default: "1.0"}
            relationships:
              canvas: {destination: Canvas, inverse: circles}
          Canvas:
            relationships:
              circles: {destination: Circle, inverse: canvas, toMany: true, deleteRule: cascade}
        """

    static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1.0">
            <entity name="Shape" isAbstract="YES">
                <attribute name="name" attributeType="String"/>
            </entity>
            <entity name="Circle" representedClassName="CircleClass" parentEntity="Shape">
                <attribute name="radius" optional="YES" attributeType="Double" defaultValueString="1.0"/>
                <relationship name="canvas" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Canvas" inverseName="circles" inverseEntity="Canvas"/>
            </entity>
            <entity name="Canvas">
                <relationship name="circles" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Circle" inverseName="canvas" inverseEntity="Circle"/>
            </entity>
        </model>
        """

    static func fromYAML(_ text: String) throws -> VersionHash.EntityHashes {
        VersionHash.hashes(of: try NativeModelLoader.parseVersion(text, name: "v", file: "v.yaml"))
    }

    static func fromXML(_ text: String) throws -> VersionHash.EntityHashes {
        var warnings: [ModelIssue] = []
        return VersionHash.hashes(of: try XcodeModelLoader.parseContents(Data(text.utf8), name: "v", file: "contents", warnings: &warnings))
    }

    /// Golden values: a hash never changes between releases. If this fails, the encoding
    /// changed, and every store in the field would look incompatible.
    @Test func goldenHashesArePinned() throws {
        let hashes = try Self.fromYAML(Self.yaml)
        #expect(hashes.model == "7cbc718825e07d0b6e57bc511fc5c0e6c0df6a72fad155c0a0b3ed43c2a2e4f0")
        // Computed independently (Python, hashlib) from the encoding in docs/model-format.md.
        #expect(hashes.entities["Canvas"] == "4aff50a4a56554c906f7caef1efa3e6713c2b9de7845922208189d1e24319292")
        #expect(hashes.entities["Circle"] == "620d61cb5cba5224017c2b2355918f1b79c06217f5dbbca79b8db9e682705d9e")
        let recipes = try ModelLoader.load(path: Paths.migrations)
        #expect(recipes.versions.map { VersionHash.hashes(of: $0).model } == [
            "5cd480b78ce8bfcbe7f671eede88114a99237fdec328e35c7df39334d5f934c1",
            "f4765e15b1021f7158fe086409ddbc2b402af2bf722de0fb5362accd6691687e",
            "1946af5ee5c6b5a17f8138f4747e3caf34f80c9357f0540fea1a94713d52bc67",
        ])
    }

    @Test func theSameVersionInBothFormatsHasTheSameHashes() throws {
        #expect(try Self.fromYAML(Self.yaml) == Self.fromXML(Self.xml))
        let native = try ModelLoader.load(path: Paths.migrations).version(named: "Recipes 1")!
        let xcode = try ModelLoader.load(path: Paths.fixtures + "/Recipes.xcdatamodeld").version(named: "Recipes 1")!
        #expect(VersionHash.hashes(of: native) == VersionHash.hashes(of: xcode))
    }

    /// (what changes, YAML edit, XML edit): each is a hashed feature.
    static let hashedChanges: [(String, String, String, String, String)] = [
        ("attribute type", "radius: {type: double", "radius: {type: float", #"attributeType="Double""#, #"attributeType="Float""#),
        ("optionality", "name: {type: string, optional: false}", "name: {type: string, optional: true}", #"<attribute name="name" attributeType"#, #"<attribute name="name" optional="YES" attributeType"#),
        ("attribute name", "radius:", "diameter:", #"name="radius""#, #"name="diameter""#),
        ("entity name", "Canvas", "Board", "Canvas", "Board"),
        ("abstract", "abstract: true", "abstract: false", #"isAbstract="YES""#, ""),
        ("delete rule", "deleteRule: cascade", "deleteRule: deny", #"deletionRule="Cascade""#, #"deletionRule="Deny""#),
        ("to-many", "inverse: canvas, toMany: true", "inverse: canvas, toMany: false", #"optional="YES" toMany="YES" deletionRule="Cascade""#, #"optional="YES" maxCount="1" deletionRule="Cascade""#),
        ("versionHashModifier", "className: CircleClass", "className: CircleClass\n    versionHashModifier: v2", #"representedClassName="CircleClass""#, #"representedClassName="CircleClass" versionHashModifier="v2""#),
    ]

    static let unhashedChanges: [(String, String, String, String, String)] = [
        ("class name", "className: CircleClass", "className: Round", #"representedClassName="CircleClass""#, #"representedClassName="Round""#),
        ("default value", #"default: "1.0""#, #"default: "2.5""#, #"defaultValueString="1.0""#, #"defaultValueString="2.5""#),
        ("version identifier", #"["1.0"]"#, #"["2.0"]"#, #"userDefinedModelVersionIdentifier="1.0""#, #"userDefinedModelVersionIdentifier="2.0""#),
        ("userInfo", "className: CircleClass", "className: CircleClass\n    userInfo: {note: hi}", #"<attribute name="radius""#, #"<userInfo><entry key="note" value="hi"/></userInfo><attribute name="radius""#),
        ("renaming identifier", "radius: {type: double", "radius: {renamingIdentifier: r, type: double", #"<attribute name="radius""#, #"<attribute elementID="r" name="radius""#),
    ]

    @Test func changingAHashedFeatureChangesTheHashInBothFormats() throws {
        let baseYAML = try Self.fromYAML(Self.yaml), baseXML = try Self.fromXML(Self.xml)
        for (what, yamlFrom, yamlTo, xmlFrom, xmlTo) in Self.hashedChanges {
            #expect(Self.yaml.contains(yamlFrom) && Self.xml.contains(xmlFrom), "\(what): the edit must apply")
            let yaml = try Self.fromYAML(Self.yaml.replacingOccurrences(of: yamlFrom, with: yamlTo))
            let xml = try Self.fromXML(Self.xml.replacingOccurrences(of: xmlFrom, with: xmlTo))
            #expect(yaml.model != baseYAML.model, "\(what) must change the YAML hash")
            #expect(xml.model != baseXML.model, "\(what) must change the XML hash")
            #expect(yaml == xml, "\(what): both formats agree")
        }
    }

    @Test func changingAnUnhashedFeatureKeepsTheHashInBothFormats() throws {
        let baseYAML = try Self.fromYAML(Self.yaml), baseXML = try Self.fromXML(Self.xml)
        for (what, yamlFrom, yamlTo, xmlFrom, xmlTo) in Self.unhashedChanges {
            #expect(Self.yaml.contains(yamlFrom) && Self.xml.contains(xmlFrom), "\(what): the edit must apply")
            let yamlText = Self.yaml.replacingOccurrences(of: yamlFrom, with: yamlTo)
            let xmlText = Self.xml.replacingOccurrences(of: xmlFrom, with: xmlTo)
            #expect(yamlText != Self.yaml && xmlText != Self.xml)
            let yaml = try Self.fromYAML(yamlText), xml = try Self.fromXML(xmlText)
            #expect(yaml == baseYAML, "\(what) must not change the YAML hash")
            #expect(xml == baseXML, "\(what) must not change the XML hash")
        }
    }
}
