import Foundation
import Testing
import ObjectModel
@testable import Planning

/// Every attribute type change: between numbers in place (lossless) or after a check of the
/// values (checked), anything else refused (docs/lightweight-inference.md, "Type changes").
@Suite struct TypeChangeInferenceTests {
    struct Pair: Sendable, CustomTestStringConvertible {
        var from: AttributeType
        var to: AttributeType
        /// "lossless", "checked" or "refused".
        var verdict: String

        var testDescription: String { "\(from.rawValue) -> \(to.rawValue): \(verdict)" }
    }

    /// Rows: from; columns: to, in the order Boolean, Integer 16, 32, 64, Decimal, Float, Double.
    /// L lossless, C checked, "-" the same type.
    static let matrix = [
        "- L L L L L L", // Boolean
        "C - L L L L L", // Integer 16
        "C C - L L C L", // Integer 32
        "C C C - L C C", // Integer 64
        "C C C C - C C", // Decimal
        "C C C C C - L", // Float
        "C C C C C C -", // Double
    ]
    static let numbers: [AttributeType] = [.boolean, .integer16, .integer32, .integer64, .decimal, .float, .double]

    static let numberPairs: [Pair] = zip(numbers, matrix).flatMap { from, row in
        zip(numbers, row.split(separator: " ")).compactMap { to, cell in
            switch cell {
            case "L": Pair(from: from, to: to, verdict: "lossless")
            case "C": Pair(from: from, to: to, verdict: "checked")
            default: nil
            }
        }
    }

    /// Every other change of a stored type, among numbers, strings, dates, binary data, UUIDs.
    static let refusedPairs: [Pair] = {
        let stored: [AttributeType] = numbers + [.string, .date, .binaryData, .uuid, .uri, .transformable]
        return stored.flatMap { from in
            stored.compactMap { to in
                from == to || (numbers.contains(from) && numbers.contains(to)) ? nil : Pair(from: from, to: to, verdict: "refused")
            }
        }
    }()

    static func infer(_ pair: Pair) throws -> InferenceResult {
        try InferenceFixtures.infer(InlineModels.recipe("n: \(pair.from.nativeName)"), InlineModels.recipe("n: \(pair.to.nativeName)"))
    }

    @Test func theMatrixCoversEveryPairOfNumberTypes() {
        #expect(Self.numberPairs.count == 42)
        #expect(Self.refusedPairs.count == 13 * 12 - 42)
    }

    @Test(arguments: numberPairs)
    func aChangeBetweenNumbersIsInferred(_ pair: Pair) throws {
        let mapping = try #require(try Self.infer(pair).mapping, "refused")
        let change: PropertyChange = pair.verdict == "lossless" ? .widened(from: pair.from, to: pair.to) : .converted(from: pair.from, to: pair.to)
        let property = try #require(mapping.mapping(forDestinationEntity: "Recipe")?.attributeMappings.first)
        #expect(property.changes == [change])
        #expect(property.needsDataCheck == (pair.verdict == "checked"))
        #expect(mapping.needsDataCheck == (pair.verdict == "checked"))
        #expect(!mapping.hasDataLoss)
    }

    @Test(arguments: refusedPairs)
    func aChangeInvolvingAnythingButNumbersIsRefused(_ pair: Pair) throws {
        let refusals = try Self.infer(pair).refusals
        #expect(InferenceFixtures.culprits(refusals) == ["Recipe.n: lossyTypeChange"])
        #expect(refusals.first?.message.hasPrefix("type changed from \(pair.from.rawValue) to \(pair.to.rawValue); an inferred mapping converts only between number types") == true)
    }

    /// Xcode keeps a Boolean's default when its type becomes a number: NO and YES read as 0 and 1.
    @Test func anXcodeBooleanDefaultOnANumberReadsAsZeroOrOne() throws {
        let xml = """
            <model><entity name="Recipe">
              <attribute name="isSilenced" attributeType="Boolean" defaultValueString="YES"/>
              <attribute name="mutedStatus" attributeType="Integer 32" defaultValueString="YES" elementID="wasMuted"/>
              <attribute name="level" attributeType="Double" defaultValueString="YES"/>
              <attribute name="share" attributeType="Decimal" defaultValueString="NO"/>
              <attribute name="ratio" attributeType="Float" defaultValueString="no"/>
            </entity></model>
            """
        var warnings: [ModelIssue] = []
        let version = try XcodeModelLoader.parseContents(Data(xml.utf8), name: "v", file: "contents", warnings: &warnings)
        let defaults = try #require(version.entity(named: "Recipe")).attributes.map { "\($0.name) \($0.defaultValue ?? "none")" }
        #expect(defaults == ["isSilenced YES", "mutedStatus 1", "level 1", "share 0", "ratio 0"])
        #expect(warnings.map(\.message) == [
            "default 'YES' on Integer 32 read as 1", "default 'YES' on Double read as 1", "default 'NO' on Decimal read as 0", "default 'no' on Float read as 0",
        ])
        #expect(ModelValidator.validate(version).isEmpty)
    }

    @Test func aCheckedChangeSaysWhichValuesFit() {
        #expect(PropertyChange.converted(from: .integer64, to: .boolean).description == "converted from Integer 64 to Boolean (only 0 and 1 fit)")
        #expect(PropertyChange.converted(from: .integer32, to: .integer16).description == "converted from Integer 32 to Integer 16 (integers from -32768 to 32767 fit)")
        #expect(PropertyChange.converted(from: .double, to: .integer64).description == "converted from Double to Integer 64 (whole numbers from -9223372036854775808 to 9223372036854775807 fit)")
        #expect(PropertyChange.converted(from: .integer64, to: .double).description == "converted from Integer 64 to Double (integers from -2^53 to 2^53 fit)")
        #expect(PropertyChange.converted(from: .integer32, to: .float).description == "converted from Integer 32 to Float (integers from -2^24 to 2^24 fit)")
        #expect(PropertyChange.converted(from: .double, to: .decimal).description == "converted from Double to Decimal (finite numbers fit, not NaN or infinity)")
        #expect(PropertyChange.converted(from: .decimal, to: .double).description == "converted from Decimal to Double (numbers the Double holds exactly or reads back as the same decimal fit)")
    }
}
