import Testing
import Mapping

@Suite struct MappingModelTests {
    @Test func aPropertyMappingWithoutExpressionMeansTheXcodeDefault() {
        let mapping = PropertyMappingDefinition(name: "amount", valueExpression: nil)
        #expect(mapping.valueExpression == nil)
        #expect(EntityMappingType(rawValue: "transform") == .transform)
        #expect(EntityMappingType.allCases.map(\.rawValue) == ["add", "remove", "copy", "transform", "custom"])
    }
}
