import Testing
@testable import Mapping

/// A key written twice in one mapping of a mapping model is the same error as in a model
/// version (ObjectModelTests' `ModelDuplicateKeyTests`): the key, the file, and the line and column
/// of its first appearance, in YAML and in JSON.
@Suite("duplicate keys in a mapping model")
struct MappingDuplicateKeyTests {
    static let entityMapping = "source: A\ndestination: B\nentityMappings:\n  - name: R\n    type: copy\n    source: R\n    destination: R\n"

    static let cases: [(file: String, text: String, message: String)] = [
        ("m.yaml", entityMapping + "    attributes:\n      x: $source.x\n      x: $source.y\n",
         "m.yaml:9:7: duplicate key 'x'"),
        ("m.yaml", "source: A\nsource: A\ndestination: B\nentityMappings: []\n",
         "m.yaml:1:1: duplicate key 'source'"),
        ("m.json", #"{"source": "A", "destination": "B", "entityMappings": [{"name": "R", "type": "add", "type": "add", "destination": "R"}]}"#,
         "m.json:1:70: duplicate key 'type'"),
        ("m.yaml", entityMapping + "    attributes:\n      1: $source.x\n      '1': $source.y\n",
         "m.yaml:9:7: entity mapping R: duplicate key '1'"),
    ]

    @Test("a key written twice names the key, the file, the line and the column", arguments: cases.indices)
    func duplicateKey(index: Int) {
        let (file, text, message) = Self.cases[index]
        let issue = #expect(throws: MappingIssue.self) {
            try NativeMappingLoader.parse(text, file: file)
        }
        #expect(issue?.description == message)
    }
}
