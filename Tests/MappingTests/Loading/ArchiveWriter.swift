@testable import Mapping

/// Writes `bplist00` bytes for tests, one object per value (no sharing), with 4-byte offsets
/// and 2-byte references.
enum BinaryPlistWriter {
    static func bytes(_ top: PropertyListValue) -> [UInt8] {
        var objects: [[UInt8]] = []
        _ = add(top, to: &objects)
        var data: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(data.count)
            data += object
        }
        let tableOffset = data.count
        for offset in offsets { data += bigEndian(UInt64(offset), size: 4) }
        data += [0, 0, 0, 0, 0, 0, 4, 2]
        data += bigEndian(UInt64(objects.count), size: 8) + bigEndian(0, size: 8) + bigEndian(UInt64(tableOffset), size: 8)
        return data
    }

    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// Appends the value's object (after its children) and returns its reference.
    private static func add(_ value: PropertyListValue, to objects: inout [[UInt8]]) -> Int {
        let index = objects.count
        objects.append([])
        var bytes: [UInt8]
        switch value {
        case .null: bytes = [0x00]
        case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
        case .integer(let number): bytes = [0x13] + bigEndian(UInt64(bitPattern: number), size: 8)
        case .real(let number): bytes = [0x23] + bigEndian(number.bitPattern, size: 8)
        case .date(let seconds): bytes = [0x33] + bigEndian(seconds.bitPattern, size: 8)
        case .data(let data): bytes = marker(0x4, data.count) + data
        case .string(let text):
            if text.unicodeScalars.allSatisfy(\.isASCII) {
                bytes = marker(0x5, text.utf8.count) + Array(text.utf8)
            } else {
                let units = Array(text.utf16)
                bytes = marker(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            }
        case .uid(let uid): bytes = [0x81] + bigEndian(UInt64(uid), size: 2)
        case .array(let elements):
            let references = elements.map { add($0, to: &objects) }
            bytes = marker(0xA, elements.count) + references.flatMap { bigEndian(UInt64($0), size: 2) }
        case .dictionary(let dictionary):
            let pairs = dictionary.sorted { $0.key < $1.key }
            let keys = pairs.map { add(.string($0.key), to: &objects) }
            let values = pairs.map { add($0.value, to: &objects) }
            bytes = marker(0xD, pairs.count) + (keys + values).flatMap { bigEndian(UInt64($0), size: 2) }
        }
        objects[index] = bytes
        return index
    }

    private static func marker(_ type: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [type << 4 | UInt8(count)] : [type << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), size: 8)
    }
}

/// Builds NSKeyedArchiver archives of NSExpressions the way Foundation lays them out.
struct ExpressionArchive {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: Int] = [:]

    /// An archive whose root is the expression `build` returns.
    static func bytes(_ build: (inout ExpressionArchive) -> PropertyListValue) -> [UInt8] {
        var archive = ExpressionArchive()
        let root = build(&archive)
        return BinaryPlistWriter.bytes(.dictionary([
            "$version": .integer(100000),
            "$archiver": .string("NSKeyedArchiver"),
            "$top": .dictionary(["root": root]),
            "$objects": .array(archive.objects),
        ]))
    }

    mutating func add(_ value: PropertyListValue) -> PropertyListValue {
        objects.append(value)
        return .uid(objects.count - 1)
    }

    mutating func object(_ className: String, _ fields: [String: PropertyListValue]) -> PropertyListValue {
        let classReference: Int
        if let known = classes[className] {
            classReference = known
        } else {
            objects.append(.dictionary(["$classname": .string(className), "$classes": .array([.string(className), .string("NSObject")])]))
            classReference = objects.count - 1
            classes[className] = classReference
        }
        return add(.dictionary(fields.merging(["$class": .uid(classReference)]) { $1 }))
    }

    mutating func constant(_ value: PropertyListValue) -> PropertyListValue {
        object("NSConstantValueExpression", ["NSExpressionType": .integer(0), "NSConstantValue": add(value)])
    }

    mutating func variable(_ name: String) -> PropertyListValue {
        object("NSVariableExpression", ["NSExpressionType": .integer(2), "NSVariable": add(.string(name))])
    }

    mutating func array(_ elements: [PropertyListValue]) -> PropertyListValue {
        object("NSArray", ["NS.objects": .array(elements)])
    }

    /// `$variable.path` as Foundation archives it: an NSKeyPathExpression calling valueForKeyPath:.
    mutating func keyPath(_ variableName: String, _ path: String) -> PropertyListValue {
        let specifier = object("NSKeyPathSpecifierExpression", ["NSExpressionType": .integer(10), "NSKeyPath": add(.string(path))])
        return object("NSKeyPathExpression", [
            "NSExpressionType": .integer(3), "NSSelectorName": add(.string("valueForKeyPath:")),
            "NSOperand": variable(variableName), "NSArguments": array([specifier]),
        ])
    }

    mutating func function(_ operand: PropertyListValue, _ selector: String, _ arguments: [PropertyListValue]) -> PropertyListValue {
        object("NSFunctionExpression", [
            "NSExpressionType": .integer(4), "NSSelectorName": add(.string(selector)),
            "NSOperand": operand, "NSArguments": array(arguments),
        ])
    }

    /// A predicate function: its operand is the `_NSPredicateUtilities` class.
    mutating func builtin(_ selector: String, _ arguments: [PropertyListValue]) -> PropertyListValue {
        let utilities = object("NSConstantValueExpression", ["NSExpressionType": .integer(0), "NSConstantValueClassName": add(.string("_NSPredicateUtilities"))])
        return function(utilities, selector, arguments)
    }
}
