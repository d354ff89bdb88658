import Testing
@testable import ObjectModel

/// A 2,000-level inheritance chain took 29 s to validate (lookups by name scanned every entity,
/// inside walks up and down every hierarchy); it now validates in a blink.
@Suite struct DeepHierarchyTests {
    static func chain(_ depth: Int) -> ModelVersion {
        ModelVersion(name: "v", entities: (0..<depth).map { level in
            // An attribute every other level: 1,000 columns, within PostgreSQL's 1,600.
            Entity(name: "E\(level)", parent: level == 0 ? nil : "E\(level - 1)", attributes: level.isMultiple(of: 2) ? [Attribute(name: "a\(level)", type: .string)] : [])
        }, sourceFile: "v.yaml")
    }

    @Test("a 2,000-level inheritance chain validates, with one table holding every attribute")
    func deepChainValidates() {
        let version = Self.chain(2000)
        #expect(ModelValidator.validate(version) == [])
        #expect(version.rootEntities.map(\.name) == ["E0"])
        #expect(version.hierarchy(of: version.entities[0]).count == 2000)
        #expect(version.ancestry(of: version.entities[1999]).map(\.name) == (0..<2000).map { "E\($0)" })
        #expect(version.allAttributes(of: version.entities[1999]).count == 1000)
    }

    @Test("lookups follow changes to the entities")
    func indexFollowsChanges() {
        var version = Self.chain(3)
        version.entities.append(Entity(name: "Other", parent: "E1"))
        version.entities[0].name = "Root"
        version.entities[1].parent = "Root"
        #expect(version.entity(named: "E0") == nil)
        #expect(version.entity(named: "Root")?.name == "Root")
        #expect(version.hierarchy(of: version.entities[0]).map(\.name) == ["Root", "E1", "E2", "Other"])
        #expect(version.hierarchy(of: Entity(name: "Elsewhere")).isEmpty)
    }
}
