import Foundation
import Testing
@testable import Mapping

@Suite struct BinaryPropertyListTests {
    @Test func everyKindOfObjectReadsBackAsWritten() throws {
        let value = PropertyListValue.dictionary([
            "null": .null, "yes": .bool(true), "no": .bool(false),
            "small": .integer(7), "negative": .integer(-5_000_000_000), "real": .real(-0.25),
            "date": .date(700_000_000), "data": .data([0, 1, 254, 255]),
            "ascii": .string("destinationInstancesForEntityMappingNamed:sourceInstances:"),
            "utf16": .string("Crème brûlée ☕️"),
            "uid": .uid(300),
            "long array": .array((0..<20).map { .integer(Int64($0)) }),
            "nested": .array([.dictionary(["k": .array([])])]),
        ])
        #expect(try BinaryPropertyList.parse(BinaryPlistWriter.bytes(value)) == value)
    }

    @Test func integersOfEverySizeAndFloatsRead() throws {
        // Hand-laid objects: 1-, 2- and 4-byte integers, a 16-byte integer, a 4-byte real.
        let objects: [[UInt8]] = [
            [0xA5, 1, 2, 3, 4, 5],
            [0x10, 0xFF], [0x11, 0x01, 0x00], [0x12, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x14] + [UInt8](repeating: 0, count: 15) + [9],
            [0x22] + BinaryPlistWriter.bigEndian(UInt64(Float(1.5).bitPattern), size: 4),
        ]
        let bytes = Self.layout(objects, referenceSize: 1)
        #expect(try BinaryPropertyList.parse(bytes) == .array([.integer(255), .integer(256), .integer(4_294_967_295), .integer(9), .real(1.5)]))
    }

    @Test func malformedInputThrowsTheReason() {
        func reason(_ bytes: [UInt8]) -> String? {
            (#expect(throws: ArchiveDecodingError.self) { try BinaryPropertyList.parse(bytes) })?.reason
        }
        #expect(reason(Array("bplist00".utf8)) == "too short to be a binary property list")
        #expect(reason(Array("<?xml version=\"1.0\"?><plist><dict/></plist>".utf8)) == "not a binary property list (no bplist00 header)")
        #expect(reason(Self.layout([[0xA1, 0]], referenceSize: 1)) == "object 0 contains itself")
        #expect(reason(Self.layout([[0xD1, 1, 1], [0x10, 1]], referenceSize: 1)) == "a dictionary key that is not a string")
        #expect(reason(Self.layout([[0xA1, 9]], referenceSize: 1)) == "reference 9 to no object")
        #expect(reason(Self.layout([[0x5F, 0x10, 20, 0x41]], referenceSize: 1)) == "an object runs past the end of the data")
        #expect(reason(Self.layout([[0x70]], referenceSize: 1)) == "unsupported object marker 0x70")
        #expect(reason(Self.layout([[0x13, 0, 0, 0, 0, 0, 0, 0, 0]] , referenceSize: 1, objectCount: 5)) == "the trailer's object count, top object or offset table is out of range")
    }

    /// A real archive from the corpus, damaged at every byte and cut at every length: reading
    /// either returns or throws, and never traps.
    @Test func damagedArchivesNeverCrashTheReader() throws {
        let bytes = try #require(Data(base64Encoded: Self.coreIdentifierArchive, options: .ignoreUnknownCharacters)).map { $0 }
        #expect(try ArchivedExpressionDecoder.decode(archive: bytes).text()
            == #"FUNCTION($entityPolicy, "defaultCoreIdentifierForGameType:", $source.game.type)"#)
        for index in bytes.indices {
            for replacement: UInt8 in [0x00, 0x0F, 0x7F, 0xFF] {
                var damaged = bytes
                damaged[index] = replacement
                _ = try? ArchivedExpressionDecoder.decode(archive: damaged).text()
            }
        }
        for length in 0..<bytes.count {
            _ = try? ArchivedExpressionDecoder.decode(archive: Array(bytes.prefix(length)))
        }
    }

    /// `bplist00`, the objects, an offset table of 1-byte offsets, the trailer; object 0 is the top.
    static func layout(_ objects: [[UInt8]], referenceSize: UInt8, objectCount: Int? = nil) -> [UInt8] {
        var data = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(data.count))
            data += object
        }
        let tableOffset = data.count
        data += offsets
        data += [0, 0, 0, 0, 0, 0, 1, referenceSize]
        data += BinaryPlistWriter.bigEndian(UInt64(objectCount ?? objects.count), size: 8)
        data += BinaryPlistWriter.bigEndian(0, size: 8) + BinaryPlistWriter.bigEndian(UInt64(tableOffset), size: 8)
        return data
    }

    /// Delta 5 -> 6, SaveState.coreIdentifier, as stored in the corpus's xcmapping.xml.
    static let coreIdentifierArchive = """
        YnBsaXN0MDDUAQIDBAUGBwpYJHZlcnNpb25ZJGFyY2hpdmVyVCR0b3BYJG9iamVjdHMSAAGGoF8Q
        D05TS2V5ZWRBcmNoaXZlctEICVRyb290gAGvEBMLDBcYHR4mKzAxNDU5Pj9CRkpMVSRudWxs1Q0ODxAREhMUFRZZTlNPcGVyYW5kXk5TU2VsZWN0b3JOYW1lXxAQTlNFeHByZXNzaW9uVHlwZVtOU0FyZ3VtZW50c1YkY2xhc3OAA4ACEASABoASXxAhZGVmYXVsdENvcmVJZGVudGlmaWVyRm9yR2FtZVR5cGU60xkPERobHFpOU1ZhcmlhYmxlgAQQAoAFXGVudGl0eVBvbGljedIfICEiWiRjbGFzc25hbWVYJGNsYXNzZXNfEBROU1ZhcmlhYmxlRXhwcmVzc2lvbqMjJCVfEBROU1ZhcmlhYmxlRXhwcmVzc2lvblxOU0V4cHJlc3Npb25YTlNPYmplY3TSJxEoKlpOUy5vYmplY3RzoSmAB4AR1Q0ODxARLC0ULi+ACYAIgAuAEF8QEHZhbHVlRm9yS2V5UGF0aDrTGQ8RMhscgAqABVZzb3VyY2XSJxE2OKE3gAyAD9MRDzo7PD1ZTlNLZXlQYXRogA4QCoANWWdhbWUudHlwZdIfIEBBXxAcTlNLZXlQYXRoU3BlY2lmaWVyRXhwcmVzc2lvbqNAJCXSHyBDRF5OU011dGFibGVBcnJheaNDRSVXTlNBcnJhedIfIEdIXxATTlNLZXlQYXRoRXhwcmVzc2lvbqRHSSQlXxAUTlNGdW5jdGlvbkV4cHJlc3Npb27SHyBFS6JFJdIfIElNo0kkJQAIABEAGgAkACkAMgA3AEkATABRAFMAaQBvAHoAhACTAKYAsgC5ALsAvQC/AMEAwwDnAO4A+QD7AP0A/wEMAREBHAElATwBQAFXAWQBbQFyAX0BfwGBAYMBjgGQAZIBlAGWAakBsAGyAbQBuwHAAcIBxAHGAc0B1wHZAdsB3QHnAewCCwIPAhQCIwInAi8CNAJKAk8CZgJrAm4CcwAAAAAAAAIBAAAAAAAAAE4AAAAAAAAAAAAAAAAAAAJ3
        """
}
