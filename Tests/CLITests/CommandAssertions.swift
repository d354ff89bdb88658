import Testing

/// Runs `orchestrator arguments…` and compares everything it printed and its exit code with what
/// is expected, as swift-argument-parser's example tests do: for these commands the output is
/// the contract, so any change to it fails here and is reviewed. A non-empty expected output
/// without a final newline gets one (the commands end every line).
@discardableResult
func assertCommand(
    _ arguments: [String], databaseURL: String? = nil,
    output: String = "", errorOutput: String = "", exitCode: Int32 = 0,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> CLIResult {
    let result = try OrchestratorBinary.run(arguments, databaseURL: databaseURL)
    let command = "orchestrator " + arguments.joined(separator: " ")
    #expect(result.exitCode == exitCode, "exit code of \(command)\n\(result)", sourceLocation: sourceLocation)
    for (stream, actual, expected) in [("stdout", result.stdout, output), ("stderr", result.stderr, errorOutput)] {
        let wanted = expected.isEmpty || expected.hasSuffix("\n") ? expected : expected + "\n"
        #expect(actual == wanted, "\(stream) of \(command): \(firstDifference(wanted, actual))\n\(result)", sourceLocation: sourceLocation)
    }
    return result
}

/// The first line where `actual` differs from `expected`, both shown.
func firstDifference(_ expected: String, _ actual: String) -> String {
    func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0)
    }
    let (wanted, got) = (lines(expected), lines(actual))
    for index in 0..<max(wanted.count, got.count) {
        let want = index < wanted.count ? String(wanted[index]) : "<no line>"
        let have = index < got.count ? String(got[index]) : "<no line>"
        if want != have { return "line \(index + 1) differs\n  expected: \(want)\n  actual:   \(have)" }
    }
    return "no difference"
}

/// A SHA-256 digest as the commands print it: 64 lowercase hex digits.
func isSHA256Hex(_ text: String) -> Bool {
    text.utf8.count == 64 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
}
