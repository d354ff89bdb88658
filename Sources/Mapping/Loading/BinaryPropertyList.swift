/// A binary property list, keyed archive or archived expression that cannot be read; `reason`
/// says why, for a message that also names the file and the property.
struct ArchiveDecodingError: Error, Equatable {
    var reason: String
}

/// A value read from a binary property list.
indirect enum PropertyListValue: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    case data([UInt8])
    case string(String)
    /// A keyed archive's reference to one of its `$objects`.
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
}

/// Reads `bplist00`, the binary property list format NSKeyedArchiver writes. Every offset, count
/// and reference is checked against the data, so malformed input throws instead of trapping.
///
/// Layout: the header `bplist00`; the objects; a table of object offsets; a 32-byte trailer
/// holding the offset size, the reference size, the object count, the top object and the table's
/// offset. Each object starts with a marker byte: its type in the high nibble, a size or count in
/// the low one (15: the count follows as an integer object).
struct BinaryPropertyList {
    static func parse(_ bytes: [UInt8]) throws -> PropertyListValue {
        var reader = try BinaryPropertyList(bytes)
        return try reader.value(at: reader.topObject, depth: 0)
    }

    private let bytes: [UInt8]
    private let referenceSize: Int
    private let offsets: [Int]
    private let topObject: Int
    private var resolved: [Int: PropertyListValue] = [:]
    /// References being resolved, to reject cycles.
    private var inProgress: Set<Int> = []

    private static let maximumDepth = 256

    private init(_ bytes: [UInt8]) throws {
        // 1. Header and trailer.
        let trailerSize = 32
        guard bytes.count >= 8 + trailerSize + 1 else { throw ArchiveDecodingError(reason: "too short to be a binary property list") }
        guard bytes.prefix(8).elementsEqual("bplist00".utf8) else { throw ArchiveDecodingError(reason: "not a binary property list (no bplist00 header)") }
        let trailer = bytes.count - trailerSize
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objectCount = Self.unsigned(bytes[(trailer + 8)..<(trailer + 16)])
        let topObject = Self.unsigned(bytes[(trailer + 16)..<(trailer + 24)])
        let tableOffset = Self.unsigned(bytes[(trailer + 24)..<(trailer + 32)])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw ArchiveDecodingError(reason: "bad offset or reference size in the trailer")
        }
        // 2. The offset table lies between the objects and the trailer.
        guard objectCount >= 1, objectCount <= UInt64(bytes.count), topObject < objectCount,
              tableOffset >= 9, tableOffset <= UInt64(trailer),
              objectCount * UInt64(offsetSize) <= UInt64(trailer) - tableOffset
        else {
            throw ArchiveDecodingError(reason: "the trailer's object count, top object or offset table is out of range")
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(objectCount))
        for index in 0..<Int(objectCount) {
            let start = Int(tableOffset) + index * offsetSize
            let offset = Self.unsigned(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < tableOffset else {
                throw ArchiveDecodingError(reason: "object \(index) lies outside the object area")
            }
            offsets.append(Int(offset))
        }
        self.bytes = bytes
        self.referenceSize = referenceSize
        self.offsets = offsets
        self.topObject = Int(topObject)
    }

    private static func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
    }

    private static func unsigned(_ slice: ArraySlice<UInt8>) -> UInt64 {
        slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads `count` bytes at `start`, or throws if they run past the object area.
    private func slice(_ start: Int, _ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, start >= 0, start <= bytes.count - 32, count <= bytes.count - 32 - start else {
            throw ArchiveDecodingError(reason: "an object runs past the end of the data")
        }
        return bytes[start..<(start + count)]
    }

    private mutating func value(at reference: Int, depth: Int) throws -> PropertyListValue {
        guard reference >= 0, reference < offsets.count else { throw ArchiveDecodingError(reason: "reference \(reference) to no object") }
        if let known = resolved[reference] { return known }
        guard depth < Self.maximumDepth else { throw ArchiveDecodingError(reason: "nested too deeply") }
        guard inProgress.insert(reference).inserted else { throw ArchiveDecodingError(reason: "object \(reference) contains itself") }
        defer { inProgress.remove(reference) }
        let result = try parseObject(at: offsets[reference], depth: depth)
        resolved[reference] = result
        return result
    }

    private mutating func parseObject(at offset: Int, depth: Int) throws -> PropertyListValue {
        let marker = try slice(offset, 1).first!
        let info = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw ArchiveDecodingError(reason: "unknown object marker \(Self.hex(marker))")
            }
        case 0x1:
            return .integer(try integer(at: offset).value)
        case 0x2:
            switch info {
            case 2: return .real(Double(Float(bitPattern: UInt32(Self.unsigned(try slice(offset + 1, 4))))))
            case 3: return .real(Double(bitPattern: Self.unsigned(try slice(offset + 1, 8))))
            default: throw ArchiveDecodingError(reason: "a real of \(1 << info) bytes")
            }
        case 0x3:
            guard marker == 0x33 else { throw ArchiveDecodingError(reason: "unknown object marker \(Self.hex(marker))") }
            return .date(Double(bitPattern: Self.unsigned(try slice(offset + 1, 8))))
        case 0x4:
            let (count, start) = try countAndStart(at: offset)
            return .data(Array(try slice(start, count)))
        case 0x5:
            let (count, start) = try countAndStart(at: offset)
            // ASCII by the format; any byte above 0x7F is read as Latin-1 rather than refused.
            return .string(String(String.UnicodeScalarView(try slice(start, count).map { Unicode.Scalar($0) })))
        case 0x6:
            let (count, start) = try countAndStart(at: offset)
            guard count <= Int.max / 2 else { throw ArchiveDecodingError(reason: "a string too long for the data") }
            let units = try slice(start, count * 2)
            let codeUnits = stride(from: units.startIndex, to: units.endIndex, by: 2).map { UInt16(units[$0]) << 8 | UInt16(units[$0 + 1]) }
            return .string(String(decoding: codeUnits, as: UTF16.self))
        case 0x8:
            let uid = Self.unsigned(try slice(offset + 1, info + 1))
            guard uid <= UInt64(Int.max) else { throw ArchiveDecodingError(reason: "a UID out of range") }
            return .uid(Int(uid))
        case 0xA:
            let (count, start) = try countAndStart(at: offset)
            return .array(try references(start, count).map { try value(at: $0, depth: depth + 1) })
        case 0xD:
            let (count, start) = try countAndStart(at: offset)
            guard count <= Int.max / 2 else { throw ArchiveDecodingError(reason: "a dictionary too large for the data") }
            let keyReferences = try references(start, count)
            let valueReferences = try references(start + count * referenceSize, count)
            var dictionary: [String: PropertyListValue] = [:]
            for (keyReference, valueReference) in zip(keyReferences, valueReferences) {
                guard case .string(let key) = try value(at: keyReference, depth: depth + 1) else {
                    throw ArchiveDecodingError(reason: "a dictionary key that is not a string")
                }
                dictionary[key] = try value(at: valueReference, depth: depth + 1)
            }
            return .dictionary(dictionary)
        default:
            // 0x7 (UTF-8 string), 0xB (ordered set), 0xC (set) are not written in bplist00 archives.
            throw ArchiveDecodingError(reason: "unsupported object marker \(Self.hex(marker))")
        }
    }

    /// An integer object: 1, 2 or 4 bytes unsigned, 8 bytes signed, 16 bytes when it fits in 64 bits.
    private func integer(at offset: Int) throws -> (value: Int64, end: Int) {
        let marker = try slice(offset, 1).first!
        guard marker >> 4 == 0x1 else { throw ArchiveDecodingError(reason: "expected an integer") }
        let size = 1 << Int(marker & 0x0F)
        switch size {
        case 1, 2, 4:
            return (Int64(Self.unsigned(try slice(offset + 1, size))), offset + 1 + size)
        case 8:
            return (Int64(bitPattern: Self.unsigned(try slice(offset + 1, 8))), offset + 9)
        case 16:
            let high = Self.unsigned(try slice(offset + 1, 8))
            let low = Self.unsigned(try slice(offset + 9, 8))
            guard high == 0, low <= UInt64(Int64.max) else { throw ArchiveDecodingError(reason: "an integer beyond 64 bits") }
            return (Int64(low), offset + 17)
        default:
            throw ArchiveDecodingError(reason: "an integer of \(size) bytes")
        }
    }

    /// The element count in the marker's low nibble, or the integer after it when that is 15.
    private func countAndStart(at offset: Int) throws -> (count: Int, start: Int) {
        let info = Int(bytes[offset] & 0x0F)
        guard info == 0x0F else { return (info, offset + 1) }
        let (count, end) = try integer(at: offset + 1)
        guard count >= 0, count <= Int64(bytes.count) else { throw ArchiveDecodingError(reason: "a count larger than the data") }
        return (Int(count), end)
    }

    private func references(_ start: Int, _ count: Int) throws -> [Int] {
        guard count <= Int.max / referenceSize else { throw ArchiveDecodingError(reason: "a collection too large for the data") }
        let area = try slice(start, count * referenceSize)
        return stride(from: area.startIndex, to: area.endIndex, by: referenceSize).map {
            Int(truncatingIfNeeded: Self.unsigned(area[$0..<($0 + referenceSize)]))
        }
    }
}
