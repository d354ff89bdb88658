import Foundation

/// Checks an XML document for what Foundation's XMLParser on Linux cannot survive, before it
/// parses: bytes that are not UTF-8 in a name (SIGILL), and a processing instruction without
/// data such as `<?x?>` (SIGSEGV, a null string read in its callback). Xcode writes neither:
/// UTF-8 only, and no processing instruction but the `<?xml …?>` declaration, so the second
/// check refuses every other `<?`, wherever it is.
public enum XMLPreflight {
    /// The line and what is wrong, or nil when the parser may read `data`.
    public static func problem(in data: Data) -> (line: Int, message: String)? {
        if let invalid = InvalidUTF8.find(in: data) { return (invalid.line, invalid.message) }
        let bytes = [UInt8](data)
        var line = 1
        for index in bytes.indices {
            if bytes[index] == UInt8(ascii: "\n") { line += 1 }
            guard bytes[index] == UInt8(ascii: "<"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "?") else { continue }
            let isDeclaration = index == 0 && bytes.count > 6 && Array(bytes[2..<5]) == Array("xml".utf8) && [0x20, 0x09, 0x0A, 0x0D].contains(bytes[5])
            if !isDeclaration {
                return (line, "byte \(index) (line \(line)): processing instructions other than the <?xml …?> declaration are not supported")
            }
        }
        return nil
    }
}
