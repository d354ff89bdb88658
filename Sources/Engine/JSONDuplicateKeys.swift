import Foundation

/// Finds a key written twice in one object of a JSON text. JSONSerialization and JSONDecoder
/// keep one of the two without a word, and other readers (`jq`) the other.
enum JSONDuplicateKeys {
    /// The first key met again in the object it was written in, and the line of the second
    /// one; nil when there is none. `data` must be valid JSON (decoded already): this only
    /// follows its strings and brackets.
    static func first(in data: Data) -> (key: String, line: Int)? {
        let bytes = [UInt8](data)
        // One entry per open bracket: the keys of an object so far, nil for an array.
        var open: [Set<String>?] = []
        var expectsKey = false
        var line = 1
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                open.append([])
                expectsKey = true
            case UInt8(ascii: "["):
                open.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = open.popLast()
            case UInt8(ascii: ","):
                expectsKey = open.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\n"):
                line += 1
            case UInt8(ascii: "\""):
                let (text, end) = string(in: bytes, from: index + 1)
                index = end
                if expectsKey, let last = open.indices.last, open[last] != nil {
                    guard open[last]!.insert(text).inserted else { return (text, line) }
                    expectsKey = false
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The string whose text starts at `start`, its escapes decoded, and the index of its
    /// closing quote.
    static func string(in bytes: [UInt8], from start: Int) -> (String, Int) {
        var text = ""
        var run = start
        var index = start
        var units: [UInt16] = []
        func flush(upTo end: Int) {
            if !units.isEmpty {
                text += String(decoding: units, as: UTF16.self)
                units = []
            }
            text += String(decoding: bytes[run..<end], as: UTF8.self)
        }
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            if escaped == UInt8(ascii: "u"), index + 5 < bytes.count,
               let unit = UInt16(String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self), radix: 16) {
                if run < index { flush(upTo: index) }
                units.append(unit)
                index += 6
            } else {
                flush(upTo: index)
                let simple: [UInt8: String] = [
                    UInt8(ascii: "n"): "\n", UInt8(ascii: "t"): "\t", UInt8(ascii: "r"): "\r", UInt8(ascii: "b"): "\u{8}", UInt8(ascii: "f"): "\u{c}",
                ]
                text += simple[escaped] ?? String(UnicodeScalar(escaped))
                index += 2
            }
            run = index
        }
        flush(upTo: index)
        return (text, index)
    }
}
