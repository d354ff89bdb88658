import Foundation
import ObjectModel

/// A fleet file's store pattern: a glob over schema names (`*`, `?`, `[abc]`), matched as the
/// shell matches file names. A pattern without glob characters names one store.
public enum StorePattern {
    /// Why `pattern` cannot be used; nil when it can.
    public static func problem(_ pattern: String) -> String? {
        if pattern.isEmpty { return "it is empty" }
        if pattern.utf8.count > StoreNaming.maximumIdentifierBytes, !isGlob(pattern) { return "a schema name has at most 63 bytes" }
        var inBracket = false
        for character in pattern {
            if character == "[" {
                if inBracket { return "'[' inside a bracket expression" }
                inBracket = true
            } else if character == "]" {
                inBracket = false
            }
        }
        if inBracket { return "a '[' is never closed" }
        if pattern == "orchestrator" || pattern.hasPrefix("pg_") || pattern == "information_schema" { return "the schema is reserved" }
        return nil
    }

    public static func isGlob(_ pattern: String) -> Bool {
        pattern.contains { "*?[".contains($0) }
    }

    public static func matches(_ pattern: String, _ name: String) -> Bool {
        guard isGlob(pattern) else { return pattern == name }
        return fnmatch(pattern, name, 0) == 0
    }
}
