import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A minimal element tree read with XMLParser. (Foundation's XMLDocument on Linux recovers
/// from malformed input and prints to stderr; XMLParser reports the error and its position.)
final class XMLNode {
    let name: String
    let attributes: [String: String]
    var children: [XMLNode] = []

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    func elements(forName name: String) -> [XMLNode] {
        children.filter { $0.name == name }
    }

    func attribute(_ name: String) -> String? {
        attributes[name]
    }

    /// Xcode writes flags only as "YES"; absent means NO.
    func flag(_ name: String) -> Bool {
        attributes[name] == "YES"
    }

    /// Parses a whole document; a malformed one throws with its line and column.
    static func parse(_ data: Data, file: String) throws -> XMLNode {
        if let problem = XMLPreflight.problem(in: data) {
            throw ModelIssue(file: file, line: problem.line, message: "malformed XML: \(problem.message)")
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        let finished = parser.parse()
        if !finished || parser.parserError != nil || builder.stack.count != 0 || builder.root == nil {
            let reason = builder.root == nil ? "no root element" : "the document is incomplete or malformed"
            throw ModelIssue(file: file, line: parser.lineNumber, message: "malformed XML: \(reason) (line \(parser.lineNumber), column \(parser.columnNumber))")
        }
        return builder.root!
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLNode?
        var stack: [XMLNode] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let node = XMLNode(name: elementName, attributes: attributes)
            if let parent = stack.last { parent.children.append(node) } else if root == nil { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }
    }
}
