import Testing
@testable import ObjectModel

/// A key written twice in one mapping is an error naming the key, the file, and the line and
/// column of its first appearance, in YAML and in JSON, whether Yams finds it (equal scalars)
/// or the reader does (`1` and `'1'`: equal text, different scalars). Mapping models read the
/// same way (MappingTests' `MappingDuplicateKeyTests`).
@Suite("duplicate keys in a model version")
struct ModelDuplicateKeyTests {
    static let cases: [(file: String, text: String, message: String)] = [
        ("v.yaml", "entities:\n  A:\n    attributes:\n      name: string\n      name: int32\n",
         "v.yaml:4:7: duplicate key 'name'"),
        ("v.json", #"{"entities": {"A": {"attributes": {"x": "string", "x": "int64"}}}}"#,
         "v.json:1:36: duplicate key 'x'"),
        ("v.yaml", "entities:\n  A:\n    attributes:\n      1: string\n      '1': int64\n",
         "v.yaml:4:7: entity A: duplicate key '1'"),
        ("v.yaml", "entities:\n  A: {}\n  A: {}\nversionIdentifiers: []\n",
         "v.yaml:2:3: duplicate key 'A'"),
    ]

    @Test("a key written twice names the key, the file, the line and the column", arguments: cases.indices)
    func duplicateKey(index: Int) {
        let (file, text, message) = Self.cases[index]
        let issue = #expect(throws: ModelIssue.self) {
            try NativeModelLoader.parseVersion(text, name: "v", file: file)
        }
        #expect(issue?.description == message)
    }
}
