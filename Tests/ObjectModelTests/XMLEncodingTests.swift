import Foundation
import Testing
@testable import ObjectModel

/// Foundation's XMLParser traps (SIGILL) on element and attribute names that are not UTF-8,
/// which killed `validate`; the bytes are now checked first and the file and byte named.
@Suite struct XMLEncodingTests {
    static let header = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n".utf8)

    static let invalidNames: [(String, Data)] = [
        ("an element name", header + Data("<entity".utf8) + Data([0xC3, 0x28]) + Data(" name=\"A\"/>\n</model>\n".utf8)),
        ("an attribute name", header + Data("<entity na".utf8) + Data([0xFF, 0xFE]) + Data("me=\"A\"/>\n</model>\n".utf8)),
        ("an attribute value", header + Data("<entity name=\"".utf8) + Data([0xED, 0xA0, 0x80]) + Data("\"/>\n</model>\n".utf8)),
    ]

    @Test("bytes that are not UTF-8 are an error naming the file, line and byte", arguments: invalidNames)
    func invalidUTF8(_ place: String, _ data: Data) {
        var warnings: [ModelIssue] = []
        do {
            _ = try XcodeModelLoader.parseContents(data, name: "v", file: "m/contents", warnings: &warnings)
            Issue.record("\(place): loaded")
        } catch let issue as ModelIssue {
            #expect(issue.description.hasPrefix("m/contents:3: malformed XML: byte "), "\(place): \(issue)")
            #expect(issue.description.contains("is not valid UTF-8"), "\(place): \(issue)")
        } catch {
            Issue.record("\(place): \(error)")
        }
    }

    @Test("the offset is the first byte of the first invalid sequence")
    func offset() {
        #expect(InvalidUTF8.find(in: Data("héllo".utf8)) == nil)
        #expect(InvalidUTF8.find(in: Data([0x61, 0x0A, 0xC3, 0xA9, 0x80])) == InvalidUTF8(offset: 4, line: 2))
        #expect(InvalidUTF8.find(in: Data([0xF0, 0x9F, 0x98])) == InvalidUTF8(offset: 0, line: 1))
    }

    /// `find` skips ASCII eight bytes at a time and counts lines only at the end: on every
    /// input it agrees with one parser over the whole, counting as it goes (its first form).
    @Test("the fast scan finds what a parser over every byte finds")
    func fastScanAgreesWithAFullParse() {
        func parsed(_ data: Data) -> InvalidUTF8? {
            var parser = Unicode.UTF8.ForwardParser()
            var bytes = data.makeIterator()
            var offset = 0, line = 1
            while true {
                switch parser.parseScalar(from: &bytes) {
                case .valid(let encoded):
                    if encoded.count == 1, encoded.first == UInt8(ascii: "\n") { line += 1 }
                    offset += encoded.count
                case .error: return InvalidUTF8(offset: offset, line: line)
                case .emptyInput: return nil
                }
            }
        }
        let pieces: [[UInt8]] = [
            Array("<entity name=\"A\">\n".utf8), Array("abcdefghijklmnop".utf8), [0x0A], Array("é€😀".utf8),
            [0xC3], [0xA9], [0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xFF], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var found = 0
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(12) { bytes += pieces[next(next(2) == 0 ? 4 : pieces.count)] }
            let data = Data(bytes)
            #expect(InvalidUTF8.find(in: data) == parsed(data), "\(bytes)")
            if parsed(data) != nil { found += 1 }
        }
        #expect(found > 100)
    }
}

/// A processing instruction without data (`<?x?>`, anywhere) made Foundation's XMLParser read a
/// null string (SIGSEGV); found by `make fuzz`.
@Suite struct XMLProcessingInstructionTests {
    @Test("a processing instruction other than the declaration is an error naming its line", arguments: [
        "<?x?>\n<model/>\n", "<?xml version=\"1.0\"?>\n<?foo?>\n<model/>\n", "<?xml version=\"1.0\"?>\n<model>\n<?foo?></model>\n",
        "<?xml?><model/>\n",
    ])
    func processingInstruction(_ text: String) {
        var warnings: [ModelIssue] = []
        do {
            _ = try XcodeModelLoader.parseContents(Data(text.utf8), name: "v", file: "c", warnings: &warnings)
            Issue.record("loaded")
        } catch {
            #expect(String(describing: error).contains("processing instructions other than the <?xml …?> declaration are not supported"), "\(error)")
        }
    }

    @Test("the declaration alone is read")
    func declaration() throws {
        var warnings: [ModelIssue] = []
        let version = try XcodeModelLoader.parseContents(Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model><entity name=\"A\"/></model>\n".utf8), name: "v", file: "c", warnings: &warnings)
        #expect(version.entities.map(\.name) == ["A"])
    }
}
