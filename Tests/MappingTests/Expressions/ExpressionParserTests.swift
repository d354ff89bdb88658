import Foundation
import Mapping
import Testing

@Suite struct ExpressionParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var expected: ValueExpression
        var testDescription: String { text }
    }

    static let accepted: [Case] = [
        // The seeds' examples.
        Case(text: "$source.amount", expected: .keyPath(.source, ["amount"])),
        Case(
            text: "($source.temperature - 32.0) / 1.8",
            expected: .arithmetic(
                .divide, .arithmetic(.subtract, .keyPath(.source, ["temperature"]), .constant(.double(32))), .constant(.double(1.8))
            )
        ),
        Case(
            text: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#,
            expected: .function(
                target: .variable(.manager), selector: ValueExpression.destinationInstancesSelector,
                arguments: [.constant(.string("ChefToChef")), .keyPath(.source, ["chef"])]
            )
        ),
        Case(text: "$source.#size", expected: .keyPath(.source, ["size"])),
        Case(text: "$source.name", expected: .keyPath(.source, ["name"])),
        // Constants.
        Case(text: "42", expected: .constant(.int(42))),
        Case(text: "1.5e3", expected: .constant(.double(1500))),
        Case(text: "2E-2", expected: .constant(.double(0.02))),
        Case(text: #""privacy""#, expected: .constant(.string("privacy"))),
        Case(text: #"'say \"hi\"\n'"#, expected: .constant(.string("say \"hi\"\n"))),
        Case(text: #""caf\u00e9""#, expected: .constant(.string("café"))),
        Case(text: "nil", expected: .constant(.null)),
        Case(text: "NULL", expected: .constant(.null)),
        Case(text: "YES", expected: .constant(.bool(true))),
        Case(text: "true", expected: .constant(.bool(true))),
        Case(text: "No", expected: .constant(.bool(false))),
        Case(text: "FALSE", expected: .constant(.bool(false))),
        Case(text: #"CAST(0, "NSDate")"#, expected: .constant(.date(Date(timeIntervalSinceReferenceDate: 0)))),
        Case(text: #"cast(-86400.5, "NSDate")"#, expected: .constant(.date(Date(timeIntervalSinceReferenceDate: -86400.5)))),
        // Variables and key paths.
        Case(text: "$source", expected: .variable(.source)),
        Case(text: "$entityPolicy", expected: .variable(.entityPolicy)),
        Case(text: "$source.app.source.identifier", expected: .keyPath(.source, ["app", "source", "identifier"])),
        Case(text: "$source.#name", expected: .keyPath(.source, ["name"])),
        Case(text: "$destination.name", expected: .keyPath(.destination, ["name"])),
        // Arithmetic: precedence, associativity, unary minus, parentheses.
        Case(
            text: "1 + 2 * 3",
            expected: .arithmetic(.add, .constant(.int(1)), .arithmetic(.multiply, .constant(.int(2)), .constant(.int(3))))
        ),
        Case(
            text: "10 - 4 - 3",
            expected: .arithmetic(.subtract, .arithmetic(.subtract, .constant(.int(10)), .constant(.int(4))), .constant(.int(3)))
        ),
        Case(
            text: "8 / (4 / 2)",
            expected: .arithmetic(.divide, .constant(.int(8)), .arithmetic(.divide, .constant(.int(4)), .constant(.int(2))))
        ),
        Case(text: "-$source.amount", expected: .negate(.keyPath(.source, ["amount"]))),
        Case(text: "--1", expected: .negate(.negate(.constant(.int(1))))),
        Case(
            text: "-($source.amount+1)*2",
            expected: .arithmetic(
                .multiply, .negate(.arithmetic(.add, .keyPath(.source, ["amount"]), .constant(.int(1)))), .constant(.int(2))
            )
        ),
        // Built-in functions, in NSExpression's syntax.
        Case(text: "uppercase:($source.name)", expected: .builtin(.uppercase, [.keyPath(.source, ["name"])])),
        Case(text: "lowercase:( $source.name )", expected: .builtin(.lowercase, [.keyPath(.source, ["name"])])),
        Case(text: "abs:(-3)", expected: .builtin(.abs, [.negate(.constant(.int(3)))])),
        Case(text: "length:($source.name)", expected: .builtin(.length, [.keyPath(.source, ["name"])])),
        Case(text: "trim:($source.name)", expected: .builtin(.trim, [.keyPath(.source, ["name"])])),
        Case(text: "now()", expected: .builtin(.now, [])),
        Case(text: "add:to:(1, 2)", expected: .arithmetic(.add, .constant(.int(1)), .constant(.int(2)))),
        Case(text: "divide:by:($source.amount, 4)", expected: .arithmetic(.divide, .keyPath(.source, ["amount"]), .constant(.int(4)))),
        // FUNCTION: policy functions; key-value coding spelled as archived expressions do.
        Case(
            text: #"FUNCTION($entityPolicy, "migrateIconURL")"#,
            expected: .function(target: .variable(.entityPolicy), selector: "migrateIconURL", arguments: [])
        ),
        Case(
            text: #"FUNCTION($entityPolicy, "defaultIsActiveForBundleID:team:", $source.bundleIdentifier, $source.team)"#,
            expected: .function(
                target: .variable(.entityPolicy), selector: "defaultIsActiveForBundleID:team:",
                arguments: [.keyPath(.source, ["bundleIdentifier"]), .keyPath(.source, ["team"])]
            )
        ),
        Case(
            text: #"FUNCTION($entityPolicy, "merge:with:", $source, $destination)"#,
            expected: .function(
                target: .variable(.entityPolicy), selector: "merge:with:", arguments: [.variable(.source), .variable(.destination)]
            )
        ),
        Case(text: #"FUNCTION($source, "valueForKeyPath:", "app.bundleIdentifier")"#, expected: .keyPath(.source, ["app", "bundleIdentifier"])),
        Case(text: #"FUNCTION($source.chef, "valueForKey:", "name")"#, expected: .keyPath(.source, ["chef", "name"])),
        Case(text: "{1, 'a', nil}", expected: .list([.constant(.int(1)), .constant(.string("a")), .constant(.null)])),
        Case(text: "{}", expected: .list([])),
    ]

    @Test("accepted expressions parse to the expected tree", arguments: accepted)
    func parses(_ c: Case) throws {
        #expect(try ExpressionParser.parseExpression(c.text) == c.expected)
    }

    @Test("printing an expression and parsing the text gives it back", arguments: accepted)
    func roundTrips(_ c: Case) throws {
        let printed = c.expected.description
        #expect(try ExpressionParser.parseExpression(printed) == c.expected, "printed as \(printed)")
    }

    @Test("expressions print in canonical NSExpression syntax", arguments: [
        ("($source.temperature-32.0)/1.8", "($source.temperature - 32.0) / 1.8"),
        ("$source.#size", "$source.#size"),
        ("$source.#first.name", "$source.#first.name"),
        ("1 - (2 - 3)", "1 - (2 - 3)"),
        ("(1 * 2) + 3", "1 * 2 + 3"),
        ("-(1 + 2)", "-(1 + 2)"),
        ("uppercase:( $source.name )", "uppercase:($source.name)"),
        ("now( )", "now()"),
        ("'a\"b'", #""a\"b""#),
        (#"FUNCTION( $manager ,'destinationInstancesForEntityMappingNamed:sourceInstances:','ChefToChef',$source.chef)"#,
         #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#),
    ])
    func printsCanonically(_ text: String, _ printed: String) throws {
        #expect(try ExpressionParser.parseExpression(text).description == printed)
    }

    @Test func keywordsAreCaseInsensitiveButVariablesAreNot() throws {
        #expect(try ExpressionParser.parseExpression("function($entityPolicy, \"x\")") == .function(target: .variable(.entityPolicy), selector: "x", arguments: []))
        #expect(throws: ExpressionError.self) { try ExpressionParser.parseExpression("$Source.name") }
    }
}
