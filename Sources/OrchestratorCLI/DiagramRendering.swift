import Foundation
import Planning

/// `diagram` output: a `ModelDiagram` as a Mermaid class diagram (renders on GitHub) or as
/// Graphviz DOT. Marks are words beside the element (`«added»`, `«renamed from x»`) and, where
/// the format has them, colors: green added, red removed, amber changed.
enum DiagramRendering {
    static func mermaid(_ diagram: ModelDiagram) -> [String] {
        var lines = ["classDiagram", "    %% \(diagram.title)"]
        for entity in diagram.entities {
            let annotations = (entity.isAbstract ? ["abstract"] : []) + entity.mark.words
            let members = (annotations.isEmpty ? [] : ["<<\(annotations.joined(separator: ", "))>>"])
                + entity.attributes.map { attribute in attributeText(attribute) + guillemets(attribute.mark.words) }
            if members.isEmpty {
                lines.append("    class \(mermaidName(entity.name))")
            } else {
                lines.append("    class \(mermaidName(entity.name)) {")
                lines += members.map { "        \($0)" }
                lines.append("    }")
            }
        }
        for link in diagram.inheritance {
            lines.append("    \(mermaidName(link.parent)) <|-- \(mermaidName(link.child))" + label(link.mark.words.isEmpty ? "" : guillemets(link.mark.words)))
        }
        for relationship in diagram.relationships {
            let near = relationship.inverseCardinality.map { " \"\($0)\"" } ?? ""
            let arrow = relationship.inverseName == nil ? "-->" : "--"
            lines.append(
                "    \(mermaidName(relationship.from))\(near) \(arrow) \"\(relationship.cardinality)\" \(mermaidName(relationship.to))"
                    + label(relationshipLabel(relationship))
            )
        }
        for entity in diagram.entities {
            if let style = color(entity.mark) { lines.append("    style \(mermaidName(entity.name)) fill:\(style.fill),stroke:\(style.stroke)") }
        }
        return lines
    }

    static func dot(_ diagram: ModelDiagram) -> [String] {
        var lines = [
            "digraph \(dotString(diagram.title)) {",
            "    graph [rankdir=LR, fontname=\"Helvetica\"];",
            "    node [shape=record, fontname=\"Helvetica\", fontsize=10];",
            "    edge [fontname=\"Helvetica\", fontsize=9];",
        ]
        for entity in diagram.entities {
            let heading = ([entity.name] + (entity.isAbstract ? ["«abstract»"] : []) + entity.mark.words.map { "«\($0)»" })
                .map(recordEscaped).joined(separator: "\\n")
            let body = entity.attributes.map { recordEscaped(attributeText($0) + guillemets($0.mark.words)) + "\\l" }.joined()
            // Under rankdir=LR, a record's fields without braces stack top to bottom: name, then attributes.
            lines.append("    \(dotString(entity.name)) [label=\"\(heading)|\(body)\"\(dotColor(entity.mark))];")
        }
        for link in diagram.inheritance {
            let text = link.mark.words.isEmpty ? "" : ", label=\(dotString(guillemets(link.mark.words).trimmingCharacters(in: .whitespaces)))"
            lines.append("    \(dotString(link.child)) -> \(dotString(link.parent)) [arrowhead=empty\(text)\(dotColor(link.mark))];")
        }
        for relationship in diagram.relationships {
            var attributes = ["label=\(dotString(relationshipLabel(relationship)))", "headlabel=\(dotString(relationship.cardinality))"]
            if let inverse = relationship.inverseCardinality {
                attributes = ["dir=none"] + attributes + ["taillabel=\(dotString(inverse))"]
            } else {
                attributes = ["arrowhead=vee"] + attributes
            }
            lines.append("    \(dotString(relationship.from)) -> \(dotString(relationship.to)) [\(attributes.joined(separator: ", "))\(dotColor(relationship.mark))];")
        }
        lines.append("}")
        return lines
    }

    /// `string? name`: the `?` says optional, as in Swift.
    private static func attributeText(_ attribute: DiagramAttribute) -> String {
        "\(attribute.type)\(attribute.isOptional ? "?" : "") \(attribute.name)"
    }

    /// `recipes / chef «added»`: the relationship's name, its inverse's, then the marks.
    private static func relationshipLabel(_ relationship: DiagramRelationship) -> String {
        ([relationship.name] + (relationship.inverseName.map { [$0] } ?? [])).joined(separator: " / ") + guillemets(relationship.mark.words)
    }

    private static func guillemets(_ words: [String]) -> String {
        words.isEmpty ? "" : " «\(words.joined(separator: ", "))»"
    }

    private static func label(_ text: String) -> String {
        text.isEmpty ? "" : " : \(text.trimmingCharacters(in: .whitespaces))"
    }

    private static func color(_ mark: DiagramMark) -> (fill: String, stroke: String)? {
        switch mark.status {
        case .unchanged: nil
        case .added: ("#d9f2d9", "#2e7d32")
        case .removed: ("#f8d7da", "#c62828")
        case .changed: ("#fff3cd", "#b26a00")
        }
    }

    private static func dotColor(_ mark: DiagramMark) -> String {
        guard let color = color(mark) else { return "" }
        return ", color=\"\(color.stroke)\", fontcolor=\"\(color.stroke)\"" + (mark.status == .removed ? ", style=dashed" : "")
    }

    /// Mermaid class names are words: anything else becomes `_` (entity names are identifiers
    /// in every model we read, so this is a safeguard, not a layout rule).
    private static func mermaidName(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }

    /// A quoted DOT ID.
    private static func dotString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Text inside a record label, where `{ } | < >` and spaces at ends have meanings.
    private static func recordEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "{}|<>\"\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
