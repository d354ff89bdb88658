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

    @Test("a tag outside YAML's core schema is refused naming the file, line and tag; core tags and aliases are read")
    func unknownTags() {
        #expect(message("entities:\n  A:\n    attributes:\n      name: !!python/object:os.system string\n") == "v.yaml:4:13: unknown YAML tag '!!python/object:os.system': only the core schema's (str, int, float, bool, null, seq, map) are read")
        #expect(message("entities:\n  A: !custom {attributes: {name: string}}\n") == "v.yaml:2:6: unknown YAML tag '!custom': only the core schema's (str, int, float, bool, null, seq, map) are read")
        #expect(message("entities: !!map\n  A: {attributes: {name: !!str string, size: &t int32}}\n  B: {attributes: {size: *t}}\n") == "loaded")
        // A tag hidden behind an anchor redefined later is still met where it is written.
        #expect(message("entities:\n  A: {attributes: {a: &t string, b: &t !!binary c3RyaW5n}}\n").contains("unknown YAML tag '!!binary'"))
    }
}
