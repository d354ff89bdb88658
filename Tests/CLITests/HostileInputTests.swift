import Foundation
import Testing

/// Inputs that once killed the process (SIGILL in Foundation's XMLParser, SIGSEGV deep in the
/// expression parser) or wrote raw control characters to the terminal: now one error naming the
/// file, exit 1, no signal.
@Suite("Hostile input")
struct HostileInputTests {
    static let xmlHeader = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)

    @Test("an element name that is not UTF-8 in an Xcode model's contents is exit 1 naming the file and byte, not SIGILL")
    func invalidUTF8InModelContents() throws {
        try withTemporaryFolder { folder in
            let contents = Self.xmlHeader + Data("<model>\n<entity".utf8) + Data([0xC3, 0x28]) + Data(" name=\"A\"/>\n</model>\n".utf8)
            let file = folder.appendingPathComponent("X.xcdatamodeld/X 1.xcdatamodel/contents")
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: file)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.appendingPathComponent("X.xcdatamodeld").path])
            #expect(result.exitCode == 1, "\(result)")
            // validate reports a version that cannot be read on stdout, like every problem it finds.
            #expect(result.stdout.contains("\(file.path):3: malformed XML: byte 54 (line 3) is not valid UTF-8"), "\(result)")
        }
    }

    @Test("an attribute name that is not UTF-8 in xcmapping.xml is exit 1 naming the file and byte, not SIGILL")
    func invalidUTF8InMappingStore() throws {
        try withTemporaryFolder { folder in
            let model = try write("name: M\nversions: [V1, V2]\n", to: "M/model.yaml", in: folder).deletingLastPathComponent()
            try write("entities:\n  A:\n    attributes: {x: string}\n", to: "V1.yaml", in: model)
            try write("entities:\n  A:\n    attributes: {x: string}\n", to: "V2.yaml", in: model)
            let store = Self.xmlHeader + Data("<database>\n<object ty".utf8) + Data([0xFF]) + Data("pe=\"XDDEVMAPPINGMODEL\" id=\"z1\"/>\n</database>\n".utf8)
            let mappings = folder.appendingPathComponent("maps")
            let file = mappings.appendingPathComponent("V1toV2.xcmappingmodel/xcmapping.xml")
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try store.write(to: file)
            let result = try OrchestratorBinary.run(["validate", "--model", model.path, "--mappings", mappings.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderr.contains("V1toV2.xcmappingmodel:3: malformed XML: byte 60 (line 3) is not valid UTF-8"), "\(result)")
        }
    }

    @Test("an expression of 9,400 parentheses or 6,400 unary minus is exit 1 naming the mapping file, entity mapping and property, not SIGSEGV", arguments: [
        String(repeating: "(", count: 9400) + "$source.x" + String(repeating: ")", count: 9400),
        String(repeating: "-", count: 6400) + "$source.n",
    ])
    func deepExpression(_ expression: String) throws {
        try withTemporaryFolder { folder in
            let model = try write("name: M\nversions: [V1, V2]\n", to: "M/model.yaml", in: folder).deletingLastPathComponent()
            try write("entities:\n  A:\n    attributes: {x: string, n: int32}\n", to: "V1.yaml", in: model)
            try write("entities:\n  A:\n    attributes: {y: string, n: int32}\n", to: "V2.yaml", in: model)
            let mapping = """
                source: V1
                destination: V2
                entityMappings:
                  - {name: AToA, type: transform, source: A, destination: A, attributes: {n: "\(expression)"}}

                """
            try write(mapping, to: "v1-to-v2.yaml", in: model)
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 1, "\(result.exitCode)")
            let line = result.stdoutLines.first { $0.hasPrefix("error: ") } ?? ""
            #expect(line.hasPrefix("error: \(model.path)/v1-to-v2.yaml: entity mapping AToA, property n: "), "\(line.prefix(300))")
            #expect(line.contains("nested more than 200 levels"), "\(line.suffix(300))")
        }
    }

    @Test("control characters in names are escaped in text output and JSON-escaped in JSON")
    func controlCharactersInNames() throws {
        try withTemporaryFolder { folder in
            let model = try write("name: M\nversions: [V1]\n", to: "M/model.yaml", in: folder).deletingLastPathComponent()
            try write("entities:\n  \"Evil\\e[2J\\a\":\n    relationships: {r: {destination: \"Gone\\r\"}}\n", to: "V1.yaml", in: model)
            let text = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(text.exitCode == 1, "\(text)")
            #expect(!text.stdout.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }, "\(text)")
            #expect(text.stdout.contains("entity Evil\\u001B[2J\\u0007, property r: destination entity 'Gone\\u000D' does not exist"), "\(text)")
            let json = try OrchestratorBinary.run(["validate", "--model", model.path, "--format", "json"])
            #expect(json.exitCode == 1, "\(json)")
            let versions = try jsonObject(json.stdout)["versions"] as? [[String: Any]]
            let problems = versions?.first?["problems"] as? [String]
            #expect(problems?.first?.contains("entity Evil\u{1B}[2J\u{7}, property r: destination entity 'Gone\r'") == true, "\(json)")
        }
    }
}
