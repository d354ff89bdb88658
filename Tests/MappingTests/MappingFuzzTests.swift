import Foundation
@testable import Mapping
import ObjectModel
import Testing
import TestSupport

/// Mutated mapping models (native YAML and `xcmapping.xml`), value expressions and filter
/// predicates: each parses to a value or throws, never crashes or hangs; what parses goes
/// through validation, the checker, the SQL compiler, the evaluator and the formatter.
@Suite struct MappingFuzzTests {
    typealias F = ExpressionFixtures

    @Test("mutated native mapping models load or throw, and what loads validates or not")
    func nativeMappingModels() throws {
        let model = try NativeModelLoader.load(folder: Fuzz.repository.appendingPathComponent("bench/heavyweight/model").path)
        let fixture = try Fuzz.fixture("bench/heavyweight/model/recipes-1-to-2.yaml")
        let outcome = Fuzz.run("native mapping model", seed: 0x4A_77E4, make: { random in Fuzz.mutate(fixture, using: &random) }) { bytes in
            guard let text = String(validating: bytes, as: UTF8.self),
                  let mapping = try? NativeMappingLoader.parse(text, file: "m.yaml")
            else { return }
            _ = MappingModelValidator.validate(mapping, model: model)
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }

    @Test("mutated xcmapping.xml stores load or throw")
    func xcodeMappingModels() throws {
        // Real files are 0.4 to 1.7 MB, too slow to parse thousands of times: the loader tests'
        // store, with archived expressions, filters and every kind of entity mapping.
        let fixture = Array(XcodeMappingLoaderTests.recipesStore().xml.utf8)
        let outcome = Fuzz.run("xcmapping.xml", seed: 0x3C_3A99, make: { random in Fuzz.mutate(fixture, using: &random) }) { bytes in
            _ = try? XcodeMappingLoader.read(CoreDataXMLStore.parse(Data(bytes), file: "xcmapping.xml"), file: "xcmapping.xml")
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }

    static let validExpressions = [
        "$source.amount", "($source.temperature - 32.0) / 1.8", "$source.#size", "-$source.rating * 2 + 1",
        "uppercase:($source.chef.name)", "trim:($source.notes)", "now()", #"CAST(0, "NSDate")"#, "{1, 2, 3}",
        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#,
        #"FUNCTION($source, "valueForKeyPath:", "chef.name")"#, "abs:($source.amount) - length:($source.name)",
    ]
    static let validPredicates = [
        "amount > 100", "name BEGINSWITH[c] 'a' AND NOT isVegan == YES", "(amount + 1) * 2 >= rating OR chef.name == nil",
        "size IN {1, 2, 3}", "TRUEPREDICATE", "name LIKE 'a*b?' || notes CONTAINS \"x\"", "!(price < 0.5) && created > CAST(0, \"NSDate\")",
    ]
    static let tokens = [
        "$source", ".", "amount", "name", "chef", "#size", "(", ")", "{", "}", ",", "+", "-", "*", "/", "**", "1", "2.5", "-3",
        "'s'", "\"t\"", "nil", "YES", "NO", "FUNCTION", "CAST", "uppercase:", "now", "abs:", "AND", "OR", "NOT", "!", "&&",
        "||", "==", "!=", "<", ">=", "IN", "LIKE", "BEGINSWITH", "[c]", "[d]", "ANY", "SUBQUERY", "$manager", "$bogus", "\u{1B}",
        "TRUEPREDICATE", "1e400", "99999999999999999999", "'unterminated", "\\",
    ]

    /// A valid text mutated, or a run of random tokens.
    static func text(from valid: [String], using random: inout FuzzRandom) -> String {
        if random.int(in: 0...2) == 0 {
            return (0..<random.int(in: 1...24)).map { _ in tokens[random.int(in: 0...tokens.count - 1)] }.joined(separator: " ")
        }
        let bytes = Fuzz.mutate(Array(valid[random.int(in: 0...valid.count - 1)].utf8), using: &random)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("random value expressions parse or throw; what parses is checked, compiled, evaluated and printed")
    func valueExpressions() {
        let attributes = ["title", "totalCost", "small", "count", "temperatureC", "weight", "price", "isVegan", "created", "uid"]
        let outcome = Fuzz.run("value expression", seed: 0xE4_9E55, make: { random in
            (Self.text(from: Self.validExpressions, using: &random), attributes[random.int(in: 0...attributes.count - 1)])
        }) { text, attribute in
            guard let expression = try? ExpressionParser.parseExpression(text) else { return }
            _ = try? ExpressionParser.parseExpression(expression.description)
            guard let checked = try? F.checker().check(expression, destinationAttribute: F.destinationAttribute(attribute)) else { return }
            _ = F.compiler.compile(checked)
            _ = try? ExpressionEvaluator(now: Date()).evaluate(checked, source: ExpressionEvaluatorTests.row)
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }

    @Test("random filter predicates parse or throw; what parses is checked, compiled, evaluated and printed")
    func filterPredicates() {
        let outcome = Fuzz.run("filter predicate", seed: 0xF1_17E4, make: { random in Self.text(from: Self.validPredicates, using: &random) }) { text in
            guard let predicate = try? ExpressionParser.parsePredicate(text) else { return }
            _ = try? ExpressionParser.parsePredicate(predicate.description)
            guard let checked = try? F.checker().checkFilter(predicate) else { return }
            _ = F.compiler.compile(checked)
            _ = try? ExpressionEvaluator(now: Date()).evaluate(checked, source: ExpressionEvaluatorTests.row)
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }
}
