import Foundation
import Mapping
import Testing

@Suite struct ExpressionEvaluatorTests {
    typealias F = ExpressionFixtures

    static let now = F.date("2025-06-01T12:00:00Z")
    static let evaluator = ExpressionEvaluator(now: now)

    /// A Recipe row as the streaming path reads it: values under their key paths.
    static let row: [String: Value] = [
        "name": .string("Apple pie"),
        "notes": .string(" \t hi \n"),
        "amount": .int(-7),
        "rating": .int(5),
        "servings": .int(Int64.max),
        "temperature": .double(212),
        "weight": .double(98.6),
        "price": .decimal("12.50"),
        "size": .int(0),
        "isVegan": .bool(true),
        "created": .date(F.date("2024-01-02T03:04:05Z")),
        "link": .string("https://example.com"),
        "chef.name": .string("Ann"),
        "chef.rank": .null,
    ]

    @Test("expressions evaluate row by row", arguments: [
        ("$source.amount", "totalCost", Value.int(-7)),
        ("($source.temperature - 32.0) / 1.8", "temperatureC", .double(100)),
        ("$source.#size", "totalCost", .int(0)),
        ("$source.amount * 2", "count", .int(-14)),
        ("$source.amount / 2", "temperatureC", .double(-3.5)),
        ("$source.amount", "temperatureC", .double(-7)),
        ("$source.amount", "price", .decimal("-7")),
        ("$source.price * 1.1", "price", .decimal("13.75")),
        ("$source.price - $source.amount", "price", .decimal("19.5")),
        ("$source.price / 4", "price", .decimal("3.125")),
        // double precision -> numeric keeps 15 significant digits, as PostgreSQL's cast does.
        ("$source.price / 3", "price", .decimal("4.16666666666667")),
        ("$source.price + $source.temperature", "temperatureC", .double(224.5)),
        // A Float column holds a Float: widened exactly, printed into a Decimal with 6 digits.
        ("$source.weight", "temperatureC", .double(Double(Float(98.6)))),
        ("$source.weight", "price", .decimal("98.6")),
        ("$source.weight", "weight", .double(Double(Float(98.6)))),
        ("$source.temperature / 3", "weight", .double(Double(Float(212.0 / 3)))),
        ("-$source.rating", "small", .int(-5)),
        ("abs:($source.amount)", "totalCost", .int(7)),
        ("uppercase:($source.name)", "name", .string("APPLE PIE")),
        ("lowercase:($source.chef.name)", "title", .string("ann")),
        ("trim:($source.notes)", "title", .string("hi")),
        ("length:($source.name)", "totalCost", .int(9)),
        ("$source.chef.rank + 1", "count", .null),
        ("$source.chef.name", "title", .string("Ann")),
        ("$source.link", "title", .string("https://example.com")),
        ("now()", "created", .date(now)),
        ("$source.created", "created", .date(F.date("2024-01-02T03:04:05Z"))),
        (#""privacy""#, "title", .string("privacy")),
        ("nil", "title", .null),
        ("YES", "isVegan", .bool(true)),
        ("1", "temperatureC", .double(1)),
        ("1.5 + 2", "temperatureC", .double(3.5)),
        ("-2.5", "weight", .double(-2.5)),
    ])
    func evaluates(_ text: String, _ attribute: String, _ expected: Value) throws {
        let checked = try F.checked(text, into: attribute)
        #expect(try Self.evaluator.evaluate(checked, source: Self.row) == expected)
    }

    @Test("failures carry PostgreSQL's words", arguments: [
        ("$source.servings * 2", "count", "bigint out of range"),
        ("$source.servings", "totalCost", "integer out of range"),
        ("$source.servings", "small", "smallint out of range"),
        ("$source.amount / $source.#size", "temperatureC", "division by zero"),
        ("$source.temperature * 1e307", "temperatureC", "value out of range: overflow"),
        ("$source.temperature * 1e306", "weight", "value out of range: overflow"),
    ])
    func fails(_ text: String, _ attribute: String, _ message: String) throws {
        let checked = try F.checked(text, into: attribute)
        #expect(throws: EvaluationError(expression: checked.expression.description, message: message)) {
            try Self.evaluator.evaluate(checked, source: Self.row)
        }
    }

    @Test func textFunctionsCountAndTrimAsPostgreSQLDoes() throws {
        let length = try F.checked("length:($source.name)", into: "totalCost")
        // e + combining acute accent: two code points, as char_length counts them.
        #expect(try Self.evaluator.evaluate(length, source: ["name": .string("cafe\u{301}")]) == .int(5))
        let trim = try F.checked("trim:($source.name)", into: "title")
        #expect(try Self.evaluator.evaluate(trim, source: ["name": .string("\u{A0}x\r\n")]) == .string("\u{A0}x"))
        #expect(try Self.evaluator.evaluate(trim, source: ["name": .string(" \t")]) == .string(""))
    }

    @Test func policyFunctionsAreCalledWithTheirEvaluatedArguments() throws {
        let checked = try F.checked(
            #"FUNCTION($entityPolicy, "titleFor:rank:source:", uppercase:($source.name), $source.chef.rank, $source)"#,
            into: "title", mapping: F.recipeWithPolicy
        )
        let evaluator = ExpressionEvaluator(now: Self.now) { call in
            #expect(call.target == .entityPolicy)
            #expect(call.selector == "titleFor:rank:source:")
            #expect(call.arguments == [.value(.string("APPLE PIE")), .value(.null), .variable(.source)])
            return .string("made by the policy")
        }
        #expect(try evaluator.evaluate(checked, source: Self.row) == .string("made by the policy"))
    }

    @Test func aPolicyFunctionsResultIsStoredLikeAnyValue() throws {
        let checked = try F.checked(#"FUNCTION($entityPolicy, "cost")"#, into: "price", mapping: F.recipeWithPolicy)
        let givesThree = ExpressionEvaluator(now: Self.now) { _ in .int(3) }
        #expect(try givesThree.evaluate(checked, source: [:]) == .decimal("3"))
        let givesText = ExpressionEvaluator(now: Self.now) { _ in .string("three") }
        #expect(throws: EvaluationError(
            expression: checked.expression.description, message: "a string value cannot be stored in an attribute of type Decimal"
        )) {
            try givesText.evaluate(checked, source: [:])
        }
        #expect(throws: EvaluationError(expression: checked.expression.description, message: "no policy function can be called for cost")) {
            try Self.evaluator.evaluate(checked, source: [:])
        }
    }

    @Test("filters evaluate with NSPredicate's two-valued logic", arguments: [
        ("amount < 0", true),
        ("amount > 100", false),
        ("chef.rank > 1", false),
        ("NOT (chef.rank > 1)", true),
        ("chef.rank == nil", true),
        ("chef.rank != 2", true),
        ("NOT (chef.rank == 2)", true),
        ("chef.name == notes", false),
        ("chef.rank == chef.rank", true),
        ("amount > -7.5", true),
        ("price == 12.5", true),
        ("price > 12.49", true),
        ("weight == 98.6", false),
        ("weight < 98.6", true),
        ("temperature > amount", true),
        ("name ==[c] 'APPLE PIE'", true),
        ("name == 'apple pie'", false),
        ("name < 'a'", true),
        ("name <[c] 'a'", false),
        ("name BEGINSWITH 'App'", true),
        ("name BEGINSWITH 'app'", false),
        ("name BEGINSWITH[c] 'app'", true),
        ("name ENDSWITH 'pie'", true),
        ("name CONTAINS 'le p'", true),
        ("name CONTAINS ''", true),
        ("name LIKE 'A*e'", true),
        ("name LIKE 'A?ple*'", true),
        ("name LIKE 'apple*'", false),
        ("name LIKE[c] 'apple*'", true),
        ("amount IN {1, -7}", true),
        ("amount IN {1, 2.5}", false),
        ("name IN[c] {'apple PIE', 'x'}", true),
        ("isVegan == YES AND NOT (notes == nil)", true),
        ("isVegan == NO OR length:(name) == 9", true),
        ("created > CAST(0, \"NSDate\")", true),
        ("created > now()", false),
        ("FALSEPREDICATE OR TRUEPREDICATE", true),
    ])
    func filters(_ text: String, _ expected: Bool) throws {
        #expect(try Self.evaluator.evaluate(try F.filter(text), source: Self.row) == expected)
    }
}
