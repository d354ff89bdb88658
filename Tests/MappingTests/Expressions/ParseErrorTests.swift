import Mapping
import Testing

@Suite struct ParseErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var column: Int
        var message: String
        var testDescription: String { text }
    }

    @Test func theErrorShowsTheTextAndACaretUnderTheColumn() {
        #expect(throws: ExpressionError(text: "$source.amount +", column: 16, message: "expected an operand")) {
            try ExpressionParser.parseExpression("$source.amount +")
        }
        let error = ExpressionError(text: "$source.amount +", column: 16, message: "expected an operand")
        #expect(error.description == """
            $source.amount +
                           ^ expected an operand at column 16
            """)
    }

    @Test func tabsAndNewlinesInTheTextDoNotShiftTheCaret() {
        let error = ExpressionError(text: "1 +\n\t)", column: 6, message: "expected an operand, found ')'")
        #expect(error.description == "1 +  )\n     ^ expected an operand, found ')' at column 6")
    }

    static let expressions: [Case] = [
        Case(text: "$source.amount + )", column: 18, message: "expected an operand, found ')'"),
        Case(text: "($source.temperature - 32.0 / 1.8", column: 33, message: "expected ')'"),
        Case(text: "$source.size", column: 9, message: "'size' is a reserved word: escape it as #size"),
        Case(text: "$source.chef.FIRST", column: 14, message: "'FIRST' is a reserved word: escape it as #FIRST"),
        Case(
            text: "$src.amount", column: 1,
            message: "unknown variable $src; the variables are $manager, $source, $destination, $entityMapping, $propertyMapping, $entityPolicy"
        ),
        Case(text: "$Source.amount", column: 1, message: "unknown variable $Source (did you mean $source?)"),
        Case(text: "amount * 2", column: 1, message: "a key path starts with a variable: write $source.amount"),
        Case(text: #""unterminated"#, column: 1, message: "unterminated string"),
        Case(text: #""bad \q escape""#, column: 6, message: #"unknown escape '\q' in string"#),
        Case(text: #""\u00e""#, column: 2, message: #"expected 4 hex digits after '\u'"#),
        Case(
            text: #"FUNCTION($entityPolicy, "convert:", $source.a, $source.b)"#, column: 25,
            message: #"selector "convert:" takes 1 argument, 2 given"#
        ),
        Case(text: "FUNCTION($manager)", column: 18, message: "expected ',', found ')'"),
        Case(text: "FUNCTION($manager, selector)", column: 20, message: "expected a selector string, found 'selector'"),
        Case(text: #"FUNCTION($source, "valueForKeyPath:", "chef..name")"#, column: 19, message: #"empty key path "chef..name""#),
        Case(text: "uppercase:($source.name, 1)", column: 1, message: "uppercase: takes 1 argument, 2 given"),
        Case(text: "uppercase:$source.name", column: 11, message: "expected '(' after uppercase:, found '$source'"),
        Case(
            text: "capitalize:($source.name)", column: 1,
            message: "unknown function capitalize:; supported: uppercase:, lowercase:, abs:, length:, trim:, now()"
        ),
        Case(text: "now(1)", column: 1, message: "now takes 0 arguments, 1 given"),
        Case(text: "$source.amount $source.price", column: 16, message: "expected end of expression, found '$source'"),
        Case(text: "$source.amount % 2", column: 16, message: "unexpected character '%'"),
        Case(text: "$source.items.@count", column: 15, message: "collection operators (@count, @sum, …) are not supported"),
        Case(text: "2 ** 3", column: 3, message: "'**' (raise:toPower:) is not supported"),
        Case(
            text: #"CAST("2020-01-01", "NSDate")"#, column: 6,
            message: #"expected a number of seconds since 2001-01-01 in CAST(…, "NSDate"), found '"2020-01-01"'"#
        ),
        Case(text: #"CAST(1, "NSString")"#, column: 1, message: #"only CAST(<seconds since 2001-01-01>, "NSDate") is supported"#),
        Case(text: "", column: 1, message: "expected an operand"),
        Case(text: "   ", column: 1, message: "expected an operand"),
        Case(text: "$source.", column: 8, message: "expected a property name after '.'"),
        Case(text: "$ source", column: 1, message: "expected a variable name after '$'"),
        Case(text: "$source.#", column: 9, message: "expected a name after '#'"),
        Case(text: "1 AND 2", column: 3, message: "expected end of expression, found 'AND'"),
        Case(text: "SUBQUERY(x)", column: 1, message: "SUBQUERY is not supported"),
        Case(text: "99999999999999999999", column: 1, message: "integer 99999999999999999999 is out of range"),
    ]

    @Test("expressions that do not parse point at the column", arguments: expressions)
    func expressionErrors(_ c: Case) {
        #expect(throws: ExpressionError(text: c.text, column: c.column, message: c.message)) {
            try ExpressionParser.parseExpression(c.text)
        }
    }

    static let predicates: [Case] = [
        Case(text: "amount >", column: 8, message: "expected an operand"),
        Case(text: "amount 100", column: 8, message: "expected a comparison operator, found '100'"),
        Case(text: #"name ==[d] "x""#, column: 9, message: "diacritic-insensitive comparison [d] is not supported"),
        Case(text: #"name ==[cd] "x""#, column: 9, message: "diacritic-insensitive comparison [cd] is not supported"),
        Case(text: #"name ==[x] "a""#, column: 9, message: "unknown comparison option 'x' in [x]; only [c] is supported"),
        Case(text: #"name ==[c "a""#, column: 11, message: #"expected ']', found '"a"'"#),
        Case(text: #"ANY ingredients.name == "salt""#, column: 1, message: "ANY is not supported"),
        Case(text: #"name MATCHES "a.*""#, column: 6, message: "MATCHES is not supported"),
        Case(text: "amount BETWEEN {1, 5}", column: 8, message: "BETWEEN is not supported"),
        Case(text: "(amount > 100", column: 13, message: "expected ')'"),
        Case(text: "amount > 100 AND", column: 16, message: "expected an operand"),
        Case(text: "amount > 100 AND OR", column: 18, message: "expected an operand, found 'OR'"),
        Case(text: "size > 3", column: 1, message: "'size' is a reserved word: escape it as #size"),
        Case(text: "amount > 100 extra", column: 14, message: "expected end of predicate, found 'extra'"),
        Case(text: "(amount + 1 > 2", column: 15, message: "expected ')'"),
        Case(text: "NOT", column: 3, message: "expected an operand"),
        Case(text: "", column: 1, message: "expected an operand"),
    ]

    @Test("predicates that do not parse point at the column", arguments: predicates)
    func predicateErrors(_ c: Case) {
        #expect(throws: ExpressionError(text: c.text, column: c.column, message: c.message)) {
            try ExpressionParser.parsePredicate(c.text)
        }
    }
}
