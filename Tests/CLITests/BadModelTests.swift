import Foundation
import Testing

/// A model that cannot be used stops every command with one line naming the culprit and exit 1.
@Suite("Bad models")
struct BadModelTests {
    // validate reports a version that cannot be read like any other problem of that version,
    // beside the problems of the others; every other command stops on it only when it needs it.
    @Test("malformed YAML in a version file is one error line naming the file")
    func malformedYAML() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: "entities:\n  Recipe: [unclosed\n    attributes: {name: string}\n", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 1, "\(result)")
            let errors = result.stdoutLines.filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1, "\(result)")
            let line = try #require(errors.first)
            #expect(line.hasPrefix("error: " + model.appendingPathComponent("Shop 1.yaml").path), "\(result)")
            #expect(line.contains("malformed YAML"), "\(result)")
            #expect(result.stdoutLines.last == "Shop: 1 version(s), current 'Shop 1': 1 problem(s)", "\(result)")
            #expect(result.stderr.isEmpty, "\(result)")
        }
    }

    @Test("truncated XML in an .xcdatamodeld is one error line naming the contents file")
    func truncatedXcodeContents() throws {
        try withTemporaryFolder { folder in
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                    <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                        <attribute name="name" attributeT
                """
            let file = try write(contents, to: "X.xcdatamodeld/X 1.xcdatamodel/contents", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.appendingPathComponent("X.xcdatamodeld").path])
            #expect(result.exitCode == 1, "\(result)")
            let errors = result.stdoutLines.filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1, "\(result)")
            let line = try #require(errors.first)
            #expect(line.hasPrefix("error: " + file.path), "\(result)")
            #expect(line.contains("malformed XML"), "\(result)")
            #expect(result.stdoutLines.last == "X: 1 version(s), current 'X 1': 1 problem(s)", "\(result)")
        }
    }

    @Test("validate reports a dangling relationship destination as one line naming file, entity and property")
    func validateDanglingDestination() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: danglingVersion, in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 1, "\(result)")
            let errors = result.stdoutLines.filter { $0.hasPrefix("error:") }
            #expect(errors == [
                "error: \(model.path)/Shop 1.yaml: entity Order, property customer: destination entity 'Customer' does not exist",
            ], "\(result)")
            #expect(result.stdoutLines.last == "Shop: 1 version(s), current 'Shop 1': 1 problem(s)", "\(result)")
        }
    }

    @Test("plan refuses a model with a dangling destination, naming file, entity and property")
    func planDanglingDestination() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: danglingVersion, in: folder)
            // The model is checked before the database is looked for, so no server is needed.
            let result = try OrchestratorBinary.run(["plan", "--model", model.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderrLines == [
                "error: \(model.path)/Shop 1.yaml: entity Order, property customer: destination entity 'Customer' does not exist",
            ], "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }
}

private let danglingVersion = """
    entities:
      Order:
        attributes:
          number: {type: int64, optional: false}
        relationships:
          customer: {destination: Customer}
    """

/// A native versioned model `Shop` with one version, `Shop 1`, whose file holds `version`.
private func writeNativeModel(version: String, in folder: URL) throws -> URL {
    let model = folder.appendingPathComponent("Shop")
    try write("name: Shop\nversions: [Shop 1]\ncurrent: Shop 1\n", to: "model.yaml", in: model)
    try write(version, to: "Shop 1.yaml", in: model)
    return model
}
