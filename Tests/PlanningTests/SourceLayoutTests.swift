import Foundation
import Testing

/// How the sources are kept (STYLE.md, issue 21): no file over 300 lines, and no type spread
/// over more than three files (its declaration and extensions), so that a newcomer reads a type
/// in at most three places; no page of docs/ over 300 lines (a longer one is split into a guide
/// and a reference).
@Suite struct SourceLayoutTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static let docs = sources.deletingLastPathComponent().appendingPathComponent("docs")

    static func lineCount(_ text: String) -> Int {
        text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
    }

    static func swiftFiles() throws -> [(path: String, text: String)] {
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        return try enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map {
            ($0.path.replacingOccurrences(of: sources.path + "/", with: ""), try String(contentsOf: $0, encoding: .utf8))
        }
    }

    @Test func noSourceFileIsOver300Lines() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 100)
        let long = files.map { ($0.path, Self.lineCount($0.text)) }.filter { $0.1 > 300 }
        #expect(long.isEmpty, "\(long)")
    }

    @Test func noTypeIsSpreadOverMoreThanThreeFiles() throws {
        let declaration = try Regex(#"^(?:public |internal |private |fileprivate |final )*(?:extension|struct|class|enum|actor|protocol) ([A-Za-z_][A-Za-z0-9_.]*)"#)
        var filesOf: [String: Set<String>] = [:]
        for file in try Self.swiftFiles() {
            for line in file.text.split(separator: "\n") {
                guard let match = line.prefixMatch(of: declaration), let name = match.output[1].substring else { continue }
                filesOf[String(name), default: []].insert(file.path)
            }
        }
        #expect(filesOf["PlannedStep"] != nil)
        let spread = filesOf.filter { $0.value.count > 3 }.mapValues { $0.sorted() }
        #expect(spread.isEmpty, "\(spread)")
    }

    @Test func noDocsPageIsOver300Lines() throws {
        let pages = try FileManager.default.contentsOfDirectory(at: Self.docs, includingPropertiesForKeys: nil).filter { $0.pathExtension == "md" }
        #expect(pages.count > 10)
        let long = try pages.map { ($0.lastPathComponent, Self.lineCount(try String(contentsOf: $0, encoding: .utf8))) }.filter { $0.1 > 300 }
        #expect(long.isEmpty, "\(long)")
    }
}
