import Foundation
import Testing

/// A model that cannot be used stops every command with one line naming the culprit and exit 1.
@Suite("Bad models")
struct BadModelTests {
    // validate reports a version that cannot be read like any other problem of that version,
    // beside the problems of the others; every other command stops on it only when it needs it.
    @Test("malformed YAML in a version file is one error line naming the file and line")
    func malformedYAML() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: "entities:\n  Recipe: [unclosed\n    attributes: {name: string}\n", in: folder)
            try assertCommand(["validate", "--model", model.path], output: """
                error: \(model.path)/Shop 1.yaml:3: malformed YAML: did not find expected ',' or ']'
                Shop: 1 version(s), current 'Shop 1': 1 problem(s)
                """, exitCode: 1)
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
            try assertCommand(["validate", "--model", folder.appendingPathComponent("X.xcdatamodeld").path], output: """
                error: \(file.path):4: malformed XML: the document is incomplete or malformed (line 4, column 42)
                X: 1 version(s), current 'X 1': 1 problem(s)
                """, exitCode: 1)
        }
    }

    @Test("validate reports a dangling relationship destination as one line naming file, entity and property")
    func validateDanglingDestination() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: danglingVersion, in: folder)
            try assertCommand(["validate", "--model", model.path], output: """
                error: \(model.path)/Shop 1.yaml: entity Order, property customer: destination entity 'Customer' does not exist
                Shop: 1 version(s), current 'Shop 1': 1 problem(s)
                """, exitCode: 1)
        }
    }

    @Test("validate --format json lists the problem under its version")
    func validateDanglingDestinationJSON() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: danglingVersion, in: folder)
            try assertCommand(["validate", "--model", model.path, "--format", "json"], output: """
                {"model":"Shop","path":"\(model.path)","currentVersion":"Shop 1","valid":false,"versions":[{"name":"Shop 1","valid":false,"problems":[\
                "\(model.path)/Shop 1.yaml: entity Order, property customer: destination entity 'Customer' does not exist"]}],\
                "mappingModels":[],"warnings":[]}
                """, exitCode: 1)
        }
    }

    @Test("plan refuses a model with a dangling destination, naming file, entity and property")
    func planDanglingDestination() throws {
        try withTemporaryFolder { folder in
            let model = try writeNativeModel(version: danglingVersion, in: folder)
            // The model is checked before the database is looked for, so no server is needed.
            try assertCommand(["plan", "--model", model.path], errorOutput: """
                error: \(model.path)/Shop 1.yaml: entity Order, property customer: destination entity 'Customer' does not exist
                """, exitCode: 1)
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
