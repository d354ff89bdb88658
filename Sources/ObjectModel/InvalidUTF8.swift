import Foundation

/// Where a byte sequence stops being UTF-8 (`XMLPreflight` checks XML files with it).
public struct InvalidUTF8: Sendable, Hashable {
    /// Offset of the first byte of the invalid sequence, from 0.
    public var offset: Int
    /// Line of that byte, from 1.
    public var line: Int

    public var message: String {
        "byte \(offset) (line \(line)) is not valid UTF-8; the file must be UTF-8, as Xcode writes it"
    }

    /// The first invalid sequence of `data`, or nil when all of it is UTF-8.
    public static func find(in data: Data) -> InvalidUTF8? {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var offset = 0
        var line = 1
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded):
                if encoded.count == 1, encoded.first == UInt8(ascii: "\n") { line += 1 }
                offset += encoded.count
            case .error:
                return InvalidUTF8(offset: offset, line: line)
            case .emptyInput:
                return nil
            }
        }
    }
}
