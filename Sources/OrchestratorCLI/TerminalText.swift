/// Text output goes to terminals, where a control character in a name (ESC, BEL, carriage
/// return…) would move the cursor, recolor or rewrite what is shown. Every line of text output
/// passes through here; JSON output has none left to escape (JSON escapes them itself).
enum TerminalText {
    /// Control characters as `\u001B`, except newline and tab, which lay out text and plans.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control && scalar != "\n" && scalar != "\t"
    }
}
