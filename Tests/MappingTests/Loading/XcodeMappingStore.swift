/// An `xcmapping.xml` as Xcode writes it: a Core Data XML store of XDDEV* objects.
struct XcodeMappingStore {
    var sourceModelPath = "Recipes/Recipes.xcdatamodeld/Recipes 2.xcdatamodel"
    var destinationModelPath = "Recipes/Recipes.xcdatamodeld/Recipes 3.xcdatamodel"
    /// The entity mappings the mapping model object lists, by id.
    var listed: [String]
    /// Every object but the mapping model: `(type, id, body lines)`.
    var objects: [(type: String, id: String, body: [String])]

    static func attribute(_ name: String, _ value: String, type: String = "string") -> String {
        "<attribute name=\"\(name)\" type=\"\(type)\">\(value)</attribute>"
    }

    static func relationship(_ name: String, _ destination: String, _ ids: [String]) -> String {
        let idrefs = ids.isEmpty ? "" : " idrefs=\"\(ids.joined(separator: " "))\""
        return "<relationship name=\"\(name)\" type=\"0/0\" destination=\"\(destination)\"\(idrefs)></relationship>"
    }

    var xml: String {
        var lines = [
            "<?xml version=\"1.0\"?>",
            "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">",
            "",
            "<database>",
            "    <databaseInfo>",
            "        <version>134481920</version>",
            "    </databaseInfo>",
            "    <object type=\"XDDEVMAPPINGMODEL\" id=\"z1\">",
            "        " + Self.attribute("sourcemodelpath", sourceModelPath),
            "        " + Self.attribute("destinationmodelpath", destinationModelPath),
            "        " + Self.relationship("entitymappings", "XDDEVENTITYMAPPING", listed),
            "    </object>",
        ]
        for object in objects {
            lines.append("    <object type=\"\(object.type)\" id=\"\(object.id)\">")
            lines += object.body.map { "        " + $0 }
            lines.append("    </object>")
        }
        lines.append("</database>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The line of the object's start tag.
    func line(of id: String) -> Int {
        xml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("id=\"\(id)\"") }! + 1
    }
}
