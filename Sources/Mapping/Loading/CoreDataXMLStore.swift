import Foundation
import ObjectModel
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The objects of a Core Data XML store (`<database><object type= id=>…`), as Xcode writes
/// `xcmapping.xml`. Read with XMLParser, which reports malformed input with its position
/// (Foundation's XMLDocument on Linux silently recovers from it).
struct CoreDataXMLStore {
    struct StoredObject {
        var id: String
        var type: String
        var line: Int
        /// Attribute name -> text, exactly as written (binary attributes are base64).
        var attributes: [String: String] = [:]
        /// Relationship name -> the ids it refers to, in the order written.
        var relationships: [String: [String]] = [:]
    }

    var objects: [String: StoredObject]
    /// Ids in file order.
    var order: [String]

    func objects(ofType type: String) -> [StoredObject] {
        order.compactMap { objects[$0] }.filter { $0.type == type }
    }

    /// Parses a whole store; malformed XML or a document that is not a store throws with its line.
    static func parse(_ data: Data, file: String) throws -> CoreDataXMLStore {
        if let problem = XMLPreflight.problem(in: data) {
            throw MappingIssue(file: file, line: problem.line, message: "malformed XML: \(problem.message)")
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        let finished = parser.parse()
        if !finished || parser.parserError != nil || builder.depth != 0 {
            throw MappingIssue(
                file: file, line: parser.lineNumber,
                message: "malformed XML (line \(parser.lineNumber), column \(parser.columnNumber))"
            )
        }
        if let problem = builder.problem {
            throw MappingIssue(file: file, line: problem.line, message: problem.message)
        }
        guard builder.rootName == "database" else {
            throw MappingIssue(file: file, message: "not a Core Data XML store: the root element is not <database>")
        }
        return CoreDataXMLStore(objects: builder.objects, order: builder.order)
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var rootName: String?
        var depth = 0
        var objects: [String: StoredObject] = [:]
        var order: [String] = []
        var problem: (line: Int, message: String)?
        private var current: StoredObject?
        private var attributeName: String?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            depth += 1
            if depth == 1 { rootName = name }
            // Objects are the root's children; their attributes and relationships are theirs.
            switch (depth, name) {
            case (2, "object"):
                guard let id = attributes["id"], let type = attributes["type"] else {
                    fail(parser, "an <object> lacks its id or type")
                    return
                }
                current = StoredObject(id: id, type: type, line: parser.lineNumber)
            case (3, "attribute") where current != nil:
                attributeName = attributes["name"]
                text = ""
            case (3, "relationship") where current != nil:
                if let relationship = attributes["name"] {
                    current?.relationships[relationship] = (attributes["idrefs"] ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if attributeName != nil { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if depth == 3, name == "attribute", let attributeName {
                current?.attributes[attributeName] = text
                self.attributeName = nil
            }
            if depth == 2, name == "object", let object = current {
                if objects[object.id] != nil {
                    fail(parser, "the id \(object.id) is used by two objects")
                }
                objects[object.id] = object
                order.append(object.id)
                current = nil
            }
            depth -= 1
        }

        private func fail(_ parser: XMLParser, _ message: String) {
            if problem == nil { problem = (parser.lineNumber, message) }
        }
    }
}
