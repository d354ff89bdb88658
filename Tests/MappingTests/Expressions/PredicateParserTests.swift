import Mapping
import Testing

@Suite struct PredicateParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var expected: FilterPredicate
        var testDescription: String { text }
    }

    static func compare(
        _ left: ValueExpression, _ op: ComparisonOperator, _ right: ValueExpression, caseInsensitive: Bool = false
    ) -> FilterPredicate {
        .comparison(Comparison(left, op, right, isCaseInsensitive: caseInsensitive))
    }

    static let amount = ValueExpression.keyPath(.source, ["amount"])
    static let name = ValueExpression.keyPath(.source, ["name"])

    static let accepted: [Case] = [
        Case(text: "amount > 100", expected: compare(amount, .greater, .constant(.int(100)))),
        Case(text: "$source.amount > 100", expected: compare(amount, .greater, .constant(.int(100)))),
        Case(text: "amount = 1", expected: compare(amount, .equal, .constant(.int(1)))),
        Case(text: "amount == 1", expected: compare(amount, .equal, .constant(.int(1)))),
        Case(text: "amount != 1", expected: compare(amount, .notEqual, .constant(.int(1)))),
        Case(text: "amount <> 1", expected: compare(amount, .notEqual, .constant(.int(1)))),
        Case(text: "amount < 1", expected: compare(amount, .less, .constant(.int(1)))),
        Case(text: "amount <= 1", expected: compare(amount, .lessOrEqual, .constant(.int(1)))),
        Case(text: "amount =< 1", expected: compare(amount, .lessOrEqual, .constant(.int(1)))),
        Case(text: "amount >= 1", expected: compare(amount, .greaterOrEqual, .constant(.int(1)))),
        Case(text: "amount => 1", expected: compare(amount, .greaterOrEqual, .constant(.int(1)))),
        Case(text: "notes == nil", expected: compare(.keyPath(.source, ["notes"]), .equal, .constant(.null))),
        Case(text: "isVegan == YES", expected: compare(.keyPath(.source, ["isVegan"]), .equal, .constant(.bool(true)))),
        Case(text: "chef.name == 'Ann'", expected: compare(.keyPath(.source, ["chef", "name"]), .equal, .constant(.string("Ann")))),
        Case(text: "#size > 2", expected: compare(.keyPath(.source, ["size"]), .greater, .constant(.int(2)))),
        Case(text: "name BEGINSWITH 'Ch'", expected: compare(name, .beginsWith, .constant(.string("Ch")))),
        Case(text: "name beginswith[c] 'ch'", expected: compare(name, .beginsWith, .constant(.string("ch")), caseInsensitive: true)),
        Case(text: "name ENDSWITH 'pie'", expected: compare(name, .endsWith, .constant(.string("pie")))),
        Case(text: "name CONTAINS[C] 'pie'", expected: compare(name, .contains, .constant(.string("pie")), caseInsensitive: true)),
        Case(text: "name LIKE 'a*b?'", expected: compare(name, .like, .constant(.string("a*b?")))),
        Case(text: "name ==[c] 'x'", expected: compare(name, .equal, .constant(.string("x")), caseInsensitive: true)),
        Case(
            text: "amount IN {1, 2}",
            expected: compare(amount, .in, .list([.constant(.int(1)), .constant(.int(2))]))
        ),
        Case(
            text: "amount + 1 > price * 2",
            expected: compare(
                .arithmetic(.add, amount, .constant(.int(1))), .greater,
                .arithmetic(.multiply, .keyPath(.source, ["price"]), .constant(.int(2)))
            )
        ),
        Case(
            text: "(amount + 1) * 2 > 3",
            expected: compare(.arithmetic(.multiply, .arithmetic(.add, amount, .constant(.int(1))), .constant(.int(2))), .greater, .constant(.int(3)))
        ),
        Case(
            text: "lowercase:(name) == 'pie'",
            expected: compare(.builtin(.lowercase, [name]), .equal, .constant(.string("pie")))
        ),
        // AND binds tighter than OR; NOT tighter than both.
        Case(
            text: "amount > 1 OR amount < 0 AND NOT isVegan == YES",
            expected: .or(
                compare(amount, .greater, .constant(.int(1))),
                .and(
                    compare(amount, .less, .constant(.int(0))),
                    .not(compare(.keyPath(.source, ["isVegan"]), .equal, .constant(.bool(true))))
                )
            )
        ),
        Case(
            text: "(amount > 1 || amount < 0) && !(notes == nil)",
            expected: .and(
                .or(compare(amount, .greater, .constant(.int(1))), compare(amount, .less, .constant(.int(0)))),
                .not(compare(.keyPath(.source, ["notes"]), .equal, .constant(.null)))
            )
        ),
        Case(
            text: "amount > 1 and amount < 5 and amount != 3",
            expected: .and(
                .and(compare(amount, .greater, .constant(.int(1))), compare(amount, .less, .constant(.int(5)))),
                compare(amount, .notEqual, .constant(.int(3)))
            )
        ),
        Case(text: "((amount > 1))", expected: compare(amount, .greater, .constant(.int(1)))),
        Case(text: "TRUEPREDICATE", expected: .constant(true)),
        Case(text: "falsepredicate", expected: .constant(false)),
    ]

    @Test("accepted predicates parse to the expected tree", arguments: accepted)
    func parses(_ c: Case) throws {
        #expect(try ExpressionParser.parsePredicate(c.text) == c.expected)
    }

    @Test("printing a predicate and parsing the text gives it back", arguments: accepted)
    func roundTrips(_ c: Case) throws {
        let printed = c.expected.description
        #expect(try ExpressionParser.parsePredicate(printed) == c.expected, "printed as \(printed)")
    }

    @Test func predicatesPrintWithTheParenthesesTheyNeed() throws {
        let text = "(amount > 1 OR amount < 0) AND NOT name BEGINSWITH[c] 'x'"
        #expect(try ExpressionParser.parsePredicate(text).description
            == #"($source.amount > 1 OR $source.amount < 0) AND NOT ($source.name BEGINSWITH[c] "x")"#)
    }
}
