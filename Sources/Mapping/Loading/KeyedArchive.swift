/// The object graph of an NSKeyedArchiver archive: a property list whose `$objects` array holds
/// every archived object (index 0 is `$null`), each object a dictionary whose values refer to
/// others by UID and whose `$class` names its class; `$top.root` is the archived root.
struct KeyedArchive {
    /// One archived object: its class and its encoded keys.
    struct Object {
        var className: String
        var fields: [String: PropertyListValue]
    }

    private let objects: [PropertyListValue]
    let rootReference: PropertyListValue

    init(_ plist: PropertyListValue) throws {
        guard case .dictionary(let archive) = plist,
              case .string("NSKeyedArchiver")? = archive["$archiver"]
        else { throw ArchiveDecodingError(reason: "not an NSKeyedArchiver archive") }
        guard case .array(let objects)? = archive["$objects"] else { throw ArchiveDecodingError(reason: "the archive has no $objects") }
        guard case .dictionary(let top)? = archive["$top"], let root = top["root"] else {
            throw ArchiveDecodingError(reason: "the archive has no $top root")
        }
        self.objects = objects
        self.rootReference = root
    }

    /// What a field holds once its UID is followed; nil for `$null` or an absent field.
    func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? {
        guard let value else { return nil }
        guard case .uid(let index) = value else { return value }
        guard index < objects.count else { throw ArchiveDecodingError(reason: "reference \(index) to no archived object") }
        if index == 0 { return nil }
        return objects[index]
    }

    /// The archived object a field refers to, with its class name; nil for `$null`.
    func object(_ value: PropertyListValue?) throws -> Object? {
        guard let resolved = try resolve(value) else { return nil }
        guard case .dictionary(let fields) = resolved else {
            throw ArchiveDecodingError(reason: "expected an archived object, found \(Self.describe(resolved))")
        }
        guard case .dictionary(let classInfo)? = try resolve(fields["$class"]),
              case .string(let className)? = classInfo["$classname"]
        else { throw ArchiveDecodingError(reason: "an archived object without a class") }
        return Object(className: className, fields: fields)
    }

    /// A string field: a plain string or an archived NSString / NSMutableString.
    func string(_ value: PropertyListValue?) throws -> String? {
        switch try resolve(value) {
        case nil: return nil
        case .string(let text)?: return text
        case .dictionary?:
            if let object = try object(value), case .string(let text)? = try resolve(object.fields["NS.string"]) { return text }
            throw ArchiveDecodingError(reason: "expected a string")
        case let other?: throw ArchiveDecodingError(reason: "expected a string, found \(Self.describe(other))")
        }
    }

    /// The elements of an archived NSArray / NSMutableArray / NSSet / NSOrderedSet, unresolved.
    func elements(_ value: PropertyListValue?) throws -> [PropertyListValue] {
        guard let array = try object(value) else { return [] }
        guard case .array(let elements)? = array.fields["NS.objects"] else {
            throw ArchiveDecodingError(reason: "expected an array, found \(array.className)")
        }
        return elements
    }

    static func describe(_ value: PropertyListValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .real: "a real"
        case .date: "a date"
        case .data: "data"
        case .string: "a string"
        case .uid: "a reference"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }
}
