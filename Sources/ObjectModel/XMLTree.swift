import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of a document read with XMLParser, and everything inside it: what the Xcode
/// model and mapping loaders read. (Foundation's XMLDocument on Linux recovers from malformed
/// input and prints to stderr; XMLParser reports the error and its position.)
public final class XMLTree {
    public let name: String
    public let attributes: [String: String]
    public private(set) var children: [XMLTree] = []
    /// Where XMLParser was at the element's start tag, and at its end tag.
    public let line: Int
    public private(set) var endLine: Int
    /// The character data inside the element, its children's included, in document order.
    public private(set) var text = ""

    init(name: String, attributes: [String: String], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
        endLine = line
    }

    public func elements(forName name: String) -> [XMLTree] {
        children.filter { $0.name == name }
    }

    public func attribute(_ name: String) -> String? {
        attributes[name]
    }

    /// Xcode writes flags only as "YES"; absent means NO.
    func flag(_ name: String) -> Bool {
        attributes[name] == "YES"
    }

    /// Why a document could not be read.
    public enum ReadError: Error {
        /// `XMLPreflight` refused it before parsing.
        case refused(line: Int, message: String)
        /// XMLParser stopped at an error, or the document ended with an element open or without
        /// one; `hasRoot` is false when not one element was read.
        case malformed(line: Int, column: Int, hasRoot: Bool)
    }

    /// The root element of a whole document.
    public static func read(_ data: Data) throws(ReadError) -> XMLTree {
        if let problem = XMLPreflight.problem(in: data) {
            throw .refused(line: problem.line, message: problem.message)
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        let finished = parser.parse()
        guard finished, parser.parserError == nil, builder.stack.isEmpty, let root = builder.root else {
            throw .malformed(line: parser.lineNumber, column: parser.columnNumber, hasRoot: builder.root != nil)
        }
        return root
    }

    /// Parses a model's document; a malformed one throws with its line and column.
    static func parse(_ data: Data, file: String) throws -> XMLTree {
        do throws(ReadError) {
            return try read(data)
        } catch .refused(let line, let message) {
            throw ModelIssue(file: file, line: line, message: "malformed XML: \(message)")
        } catch .malformed(let line, let column, let hasRoot) {
            let reason = hasRoot ? "the document is incomplete or malformed" : "no root element"
            throw ModelIssue(file: file, line: line, message: "malformed XML: \(reason) (line \(line), column \(column))")
        }
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLTree?
        var stack: [XMLTree] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let node = XMLTree(name: elementName, attributes: attributes, line: parser.lineNumber)
            if let parent = stack.last { parent.children.append(node) } else if root == nil { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            for node in stack { node.text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast().endLine = parser.lineNumber
        }
    }
}
