import Foundation

/// Reads an NSExpression archived by NSKeyedArchiver (as Xcode stores property mappings' value
/// expressions) into an `ArchivedExpression`. Dispatches on the archived class name; anything
/// it does not know throws `ArchiveDecodingError` naming it.
struct ArchivedExpressionDecoder {
    private let archive: KeyedArchive
    private static let maximumDepth = 64

    /// Decodes base64 text (whitespace between the characters allowed) of a binary plist archive.
    static func decode(base64 text: String) throws -> ArchivedExpression {
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            throw ArchiveDecodingError(reason: "the value expression data is not base64")
        }
        return try decode(archive: [UInt8](data))
    }

    static func decode(archive bytes: [UInt8]) throws -> ArchivedExpression {
        let archive = try KeyedArchive(BinaryPropertyList.parse(bytes))
        return try ArchivedExpressionDecoder(archive: archive).expression(archive.rootReference, depth: 0)
    }

    private func expression(_ reference: PropertyListValue?, depth: Int) throws -> ArchivedExpression {
        guard depth < Self.maximumDepth else { throw ArchiveDecodingError(reason: "the expression is nested too deeply") }
        guard let object = try archive.object(reference) else { throw ArchiveDecodingError(reason: "an expression is missing") }
        switch object.className {
        case "NSConstantValueExpression":
            if let className = try archive.string(object.fields["NSConstantValueClassName"]) {
                throw ArchiveDecodingError(reason: "the class \(className) as a value")
            }
            return .constant(try constant(object.fields["NSConstantValue"]))
        case "NSVariableExpression":
            guard let name = try archive.string(object.fields["NSVariable"]) else {
                throw ArchiveDecodingError(reason: "a variable expression without a name")
            }
            return .variable(name)
        case "NSSelfExpression":
            return .evaluatedObject
        case "NSKeyPathSpecifierExpression":
            return .keyPath(base: .evaluatedObject, path: try keyPath(of: object))
        case "NSFunctionExpression", "NSKeyPathExpression":
            return try function(object, depth: depth)
        case "NSAggregateExpression":
            return .aggregate(try archive.elements(object.fields["NSCollection"]).map { try expression($0, depth: depth + 1) })
        default:
            throw ArchiveDecodingError(reason: "\(object.className) is not supported (expected a constant, variable, key path, function or aggregate expression)")
        }
    }

    /// A function expression: a key path when it calls `valueForKeyPath:` with one key, a
    /// predicate function when its operand is the `_NSPredicateUtilities` class, else
    /// `FUNCTION(operand, "selector", …)`.
    private func function(_ object: KeyedArchive.Object, depth: Int) throws -> ArchivedExpression {
        guard let selector = try archive.string(object.fields["NSSelectorName"]) else {
            throw ArchiveDecodingError(reason: "a function expression without a selector")
        }
        let argumentReferences = try archive.elements(object.fields["NSArguments"])
        let operand = try archive.object(object.fields["NSOperand"])
        if ["valueForKeyPath:", "valueForKey:"].contains(selector), argumentReferences.count == 1,
           let pathObject = try archive.object(argumentReferences[0]),
           let path = try? keyPath(of: pathObject) {
            let base: ArchivedExpression = try operand.map { _ in try expression(object.fields["NSOperand"], depth: depth + 1) } ?? .evaluatedObject
            return .keyPath(base: base, path: path)
        }
        let arguments = try argumentReferences.map { try expression($0, depth: depth + 1) }
        if let operand, operand.className == "NSConstantValueExpression",
           let className = try archive.string(operand.fields["NSConstantValueClassName"]) {
            guard className == "_NSPredicateUtilities" else {
                throw ArchiveDecodingError(reason: "a function called on the class \(className)")
            }
            return .builtin(name: selector, arguments: arguments)
        }
        guard operand != nil else { return .builtin(name: selector, arguments: arguments) }
        return .function(target: try expression(object.fields["NSOperand"], depth: depth + 1), selector: selector, arguments: arguments)
    }

    /// The key path held by a key path specifier, or by a constant string.
    private func keyPath(of object: KeyedArchive.Object) throws -> String {
        let field = object.className == "NSKeyPathSpecifierExpression" ? "NSKeyPath" : "NSConstantValue"
        guard ["NSKeyPathSpecifierExpression", "NSConstantValueExpression"].contains(object.className),
              let path = try archive.string(object.fields[field]), !path.isEmpty
        else { throw ArchiveDecodingError(reason: "a key path argument that is not a key path") }
        return path
    }

    private func constant(_ reference: PropertyListValue?) throws -> ArchivedExpression.Constant {
        switch try archive.resolve(reference) {
        case nil, .null?: return .null
        case .string(let text)?: return .string(text)
        case .integer(let value)?: return .integer(value)
        case .real(let value)?: return .real(value)
        case .bool(let value)?: return .bool(value)
        case .date(let seconds)?: return .date(seconds)
        case .dictionary?:
            let object = try archive.object(reference)!
            switch object.className {
            case "NSNull": return .null
            case "NSDate":
                guard case .real(let seconds)? = try archive.resolve(object.fields["NS.time"]) else {
                    throw ArchiveDecodingError(reason: "an NSDate constant without its time")
                }
                return .date(seconds)
            case "NSString", "NSMutableString":
                return .string(try archive.string(reference) ?? "")
            default:
                throw ArchiveDecodingError(reason: "a constant of class \(object.className) has no NSExpression spelling")
            }
        case let other?:
            throw ArchiveDecodingError(reason: "a constant that is \(KeyedArchive.describe(other))")
        }
    }
}
