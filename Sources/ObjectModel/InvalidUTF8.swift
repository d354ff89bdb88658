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

    /// The first invalid sequence of `data`, or nil when all of it is UTF-8. Lines are counted
    /// only when there is one: every newline before it is a valid one-byte scalar.
    public static func find(in data: Data) -> InvalidUTF8? {
        data.withUnsafeBytes { raw in
            guard let offset = firstInvalidOffset(in: raw) else { return nil }
            var line = 1
            for byte in raw[..<offset] where byte == UInt8(ascii: "\n") { line += 1 }
            return InvalidUTF8(offset: offset, line: line)
        }
    }

    /// Runs of ASCII (nearly all of a model file) are skipped eight bytes at a time; from each
    /// other byte, a scalar boundary, one scalar is parsed, as a parser over the whole would.
    static func firstInvalidOffset(in raw: UnsafeRawBufferPointer) -> Int? {
        var offset = 0
        while offset < raw.count {
            if offset + 8 <= raw.count, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                offset += 8
                continue
            }
            if raw[offset] < 0x80 {
                offset += 1
                continue
            }
            var parser = Unicode.UTF8.ForwardParser()
            var bytes = raw[offset...].makeIterator()
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded): offset += encoded.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
        return nil
    }
}
