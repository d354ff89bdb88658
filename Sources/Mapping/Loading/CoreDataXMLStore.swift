import Foundation
import ObjectModel

/// The objects of a Core Data XML store (`<database><object type= id=>…`), as Xcode writes
/// `xcmapping.xml`, read from its `XMLTree`.
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
        let root: XMLTree
        do throws(XMLTree.ReadError) {
            root = try XMLTree.read(data)
        } catch .refused(let line, let message) {
            throw MappingIssue(file: file, line: line, message: "malformed XML: \(message)")
        } catch .malformed(let line, let column, _) {
            throw MappingIssue(file: file, line: line, message: "malformed XML (line \(line), column \(column))")
        }
        var store = CoreDataXMLStore(objects: [:], order: [])
        // Objects are the root's children; their attributes and relationships are theirs.
        for element in root.elements(forName: "object") {
            guard let id = element.attribute("id"), let type = element.attribute("type") else {
                throw MappingIssue(file: file, line: element.line, message: "an <object> lacks its id or type")
            }
            guard store.objects[id] == nil else {
                throw MappingIssue(file: file, line: element.endLine, message: "the id \(id) is used by two objects")
            }
            store.objects[id] = StoredObject(element, id: id, type: type)
            store.order.append(id)
        }
        guard root.name == "database" else {
            throw MappingIssue(file: file, message: "not a Core Data XML store: the root element is not <database>")
        }
        return store
    }
}

extension CoreDataXMLStore.StoredObject {
    init(_ element: XMLTree, id: String, type: String) {
        self.init(id: id, type: type, line: element.line)
        for child in element.children {
            guard let name = child.attribute("name") else { continue }
            switch child.name {
            case "attribute": attributes[name] = child.text
            case "relationship": relationships[name] = (child.attribute("idrefs") ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
            default: break
            }
        }
    }
}
