import Testing
@testable import ObjectModel

/// What PostgreSQL cannot create is refused by `validate`, naming entity and property, instead
/// of failing at `apply`.
@Suite struct StoreLimitTests {
    static func issues(_ yaml: String) throws -> [String] {
        ModelValidator.validate(try NativeModelLoader.parseVersion(yaml, name: "v", file: "v.yaml")).map(\.description)
    }

    static func attribute(_ type: String, default value: String) -> String {
        "entities:\n  A:\n    attributes:\n      x: {type: \(type), default: '\(value)'}\n"
    }

    @Test("defaults PostgreSQL refuses are refused", arguments: [
        ("decimal", "1e1000000"), ("decimal", "1e131072"), ("decimal", "1.5e-16383"), ("decimal", "0e-20000"),
        ("decimal", "1e99999999999999999999"), ("date", "1e400"), ("date", "-1e400"), ("date", "1e13"),
        ("float", "1e39"), ("float", "1e-50"),
    ])
    func refusedDefault(_ type: String, _ value: String) throws {
        let issues = try Self.issues(Self.attribute(type, default: value))
        #expect(issues.count == 1 && issues[0].hasPrefix("v.yaml: entity A, property x: default '\(value)' does not parse"), "\(issues)")
    }

    @Test("defaults at PostgreSQL's limits are accepted", arguments: [
        ("decimal", "1e131071"), ("decimal", "9.9e131071"), ("decimal", "1e-16383"), ("decimal", "0.05e131073"),
        ("decimal", "0e200000"), ("decimal", "-12.50"), ("date", "0"), ("date", "-6.3e10"), ("date", "2024-01-02"),
        ("float", "3.4e38"), ("float", "1e-45"), ("float", "0"), ("double", "1e308"),
    ])
    func acceptedDefault(_ type: String, _ value: String) throws {
        #expect(try Self.issues(Self.attribute(type, default: value)) == [])
    }

    @Test("a negative minCount or maxCount is refused")
    func negativeCounts() throws {
        let issues = try Self.issues("entities:\n  A:\n    relationships:\n      b: {destination: A, toMany: true}\n")
        #expect(issues == [])
        var version = try NativeModelLoader.parseVersion("entities:\n  A:\n    relationships:\n      b: {destination: A, toMany: true}\n", name: "v", file: "v.yaml")
        version.entities[0].relationships[0].minCount = -5
        #expect(ModelValidator.validate(version).map(\.description) == [
            "v.yaml: entity A, property b: minCount -5 and maxCount 0 must not be negative",
        ])
    }

    @Test("a hierarchy table over 1600 columns is refused at the property that crosses the limit, system columns counted")
    func tooManyColumns() throws {
        // _pk and _entity, then 1598 columns fit; the 1599th property does not.
        func model(attributes: Int) -> String {
            let names = (0..<attributes).map { "      a\($0): string" }
            return "entities:\n  Wide:\n    attributes:\n" + names.joined(separator: "\n") + "\n  Sub:\n    parent: Wide\n    attributes:\n      extra: int32\n"
        }
        #expect(try Self.issues(model(attributes: 1597)) == [])
        #expect(try Self.issues(model(attributes: 1598)) == [
            "v.yaml: entity Sub, property extra: table 'wide' of the hierarchy of Wide would need more than PostgreSQL's 1600 columns (system columns included) from this property on; move properties to related entities",
        ])
    }

    @Test("an index or uniqueness constraint over more than 32 properties is refused")
    func tooManyIndexColumns() throws {
        let names = (0..<33).map { "a\($0)" }
        let yaml = "entities:\n  A:\n    attributes:\n" + names.map { "      \($0): string" }.joined(separator: "\n")
            + "\n    uniquenessConstraints:\n      - [\(names.joined(separator: ", "))]\n    indexes:\n      wide: [\(names.joined(separator: ", "))]\n      narrow: [\(names.prefix(32).joined(separator: ", "))]\n"
        #expect(try Self.issues(yaml) == [
            "v.yaml: entity A: uniqueness constraint has 33 properties; PostgreSQL indexes at most 32 columns",
            "v.yaml: entity A: index 'wide' has 33 properties; PostgreSQL indexes at most 32 columns",
        ])
    }
}
