import Foundation
import JSONRendering
import Testing

@Suite struct JSONValueTests {
    @Test("a decimal renders as a JSON number that reads back to the same value", arguments: [
        (0.25, "0.25"),
        (12.0, "12.0"),
        (98000.5, "98000.5"),
        (0.00001, "1e-05"),
        (-3.5, "-3.5"),
    ])
    func decimalRendersAsAJSONNumber(value: Double, expected: String) throws {
        let rendered = JSONValue.array([.decimal(value)]).rendered
        #expect(rendered == "[\(expected)]")
        let parsed = try #require(JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [Double])
        #expect(parsed == [value])
    }

    @Test("a decimal that is not finite renders as null, since JSON has no such number")
    func nonFiniteDecimalIsNull() {
        #expect(JSONValue.array([.decimal(.infinity), .decimal(-.infinity), .decimal(.nan)]).rendered == "[null,null,null]")
    }
}
