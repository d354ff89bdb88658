import Foundation
import Mapping
import Testing

/// Thousands of nested terms once overflowed the stack (SIGSEGV in the parser); deeper than
/// `ExpressionNesting.maximumDepth` is now a parse error, and everything up to it goes through
/// every walk over the tree: checker, SQL compiler, evaluator and formatter.
@Suite struct ExpressionNestingTests {
    typealias F = ExpressionFixtures
    static let limit = ExpressionNesting.maximumDepth

    /// A name and the text; the name alone is shown for each test case.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var testDescription: String { name }
        init(_ name: String, _ text: String) {
            self.name = name
            self.text = text
        }
    }

    static let tooDeepExpressions: [Case] = [
        Case("6,400 unary minus", String(repeating: "-", count: 6400) + "$source.amount"),
        Case("9,400 parentheses", String(repeating: "(", count: 9400) + "$source.amount" + String(repeating: ")", count: 9400)),
        Case("6,400 additions", "$source.amount" + String(repeating: " + 1", count: 6400)),
        Case("6,400 multiplications", "$source.amount" + String(repeating: " * 1", count: 6400)),
        Case("6,400 nested calls", String(repeating: "abs:(", count: 6400) + "$source.amount" + String(repeating: ")", count: 6400)),
        Case("6,400 nested lists", String(repeating: "{", count: 6400) + "1" + String(repeating: "}", count: 6400)),
        Case("150 additions to a parenthesized chain of 150", "(1" + String(repeating: " + 1", count: 150) + ")" + String(repeating: " + 1", count: 150)),
    ]

    @Test("an expression nested deeper than the limit is a parse error, not a crash", arguments: tooDeepExpressions)
    func tooDeepExpression(_ example: Case) {
        do {
            _ = try ExpressionParser.parseExpression(example.text)
            Issue.record("\(example.name): parsed")
        } catch {
            #expect(error.message.contains("nested more than \(Self.limit) levels"), "\(example.name): \(error.message)")
        }
    }

    static let tooDeepPredicates: [Case] = [
        Case("6,400 NOT", String(repeating: "NOT ", count: 6400) + "amount > 1"),
        Case("9,400 parentheses", String(repeating: "(", count: 9400) + "amount > 1" + String(repeating: ")", count: 9400)),
        Case("6,400 AND", "amount > 1" + String(repeating: " AND amount > 1", count: 6400)),
        Case("6,400 OR", "amount > 1" + String(repeating: " OR amount > 1", count: 6400)),
        Case("6,400 additions in a comparison", "amount" + String(repeating: " + 1", count: 6400) + " > 1"),
    ]

    @Test("a filter nested deeper than the limit is a parse error, not a crash", arguments: tooDeepPredicates)
    func tooDeepPredicate(_ example: Case) {
        do {
            _ = try ExpressionParser.parsePredicate(example.text)
            Issue.record("\(example.name): parsed")
        } catch {
            #expect(error.message.contains("nested more than \(Self.limit) levels"), "\(example.name): \(error.message)")
        }
    }

    @Test("an expression at the limit is checked, compiled to SQL, evaluated and printed")
    func expressionAtTheLimit() throws {
        // 1 key path + (limit - 1) additions: `limit` levels.
        let text = "$source.amount" + String(repeating: " + 1", count: Self.limit - 1)
        let checked = try F.checked(text, into: "count")
        #expect(F.compiler.compile(checked) != nil)
        let value = try ExpressionEvaluator(now: Date()).evaluate(checked, source: ["amount": .int(1)])
        #expect(value == .int(Int64(Self.limit)))
        #expect(try ExpressionParser.parseExpression(checked.expression.description) == checked.expression)
        #expect(throws: ExpressionError.self) { try ExpressionParser.parseExpression(text + " + 1") }
    }

    @Test("a filter at the limit is checked, compiled to SQL and evaluated")
    func predicateAtTheLimit() throws {
        // A comparison of two operands is two levels; each NOT one more.
        let text = String(repeating: "NOT ", count: Self.limit - 2) + "amount > 1"
        let checked = try F.filter(text)
        _ = F.compiler.compile(checked)
        #expect(try ExpressionEvaluator(now: Date()).evaluate(checked, source: ["amount": .int(2)]) == true)
        #expect(throws: ExpressionError.self) { try ExpressionParser.parsePredicate("NOT " + text) }
    }
}
