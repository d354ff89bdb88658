import Testing
@testable import ObjectModel

/// YAML errors say what is wrong in the file's terms, not in libyaml's.
@Suite struct YAMLMessageTests {
    func message(_ yaml: String) -> String {
        do {
            _ = try NativeModelLoader.parseVersion(yaml, name: "v", file: "v.yaml")
            return "loaded"
        } catch {
            return String(describing: error)
        }
    }

    @Test("lists nested beyond libyaml's limit name the limit and line, not yaml_set_max_nest_level()")
    func deepNesting() {
        let text = message("entities:\n  A:\n    userInfo: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n")
        #expect(text == "v.yaml:3: malformed YAML: lists and mappings nested deeper than 1000 levels", "\(text)")
    }

    @Test("a control character in the text names its line")
    func controlCharacter() {
        let text = message("entities:\n  A: {}\n  B\u{7}: {}\n")
        #expect(text.hasPrefix("v.yaml:3: malformed YAML: control characters are not allowed"), "\(text)")
    }
}
