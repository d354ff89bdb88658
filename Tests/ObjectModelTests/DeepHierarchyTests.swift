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

/// `hash` hashed every inherited property again for each entity below it: 2.6 s for a
/// 1,000-level chain. Each property is now hashed once; the digests are the same.
@Suite struct DeepHierarchyHashTests {
    @Test("a 1,000-level chain hashes every entity as hashing it alone does")
    func deepChainHashes() {
        let version = DeepHierarchyTests.chain(1000)
        let hashes = VersionHash.hashes(of: version)
        #expect(hashes.entities.count == 1000)
        for level in [0, 1, 2, 499, 998, 999] {
            let entity = version.entities[level]
            #expect(hashes.entities[entity.name] == VersionHash.hash(of: entity, in: version), "E\(level)")
        }
        #expect(hashes.model == VersionHash.modelHash(entityHashes: Dictionary(uniqueKeysWithValues: version.entities.map { ($0.name, VersionHash.hash(of: $0, in: version)) })))
    }

    @Test("an attribute and a relationship of one name, and a duplicated entity, hash as each entity alone does")
    func sameNamesHashAlike() {
        let version = ModelVersion(name: "v", entities: [
            Entity(name: "A", attributes: [Attribute(name: "x", type: .string)], relationships: [Relationship(name: "x", destination: "A")]),
            Entity(name: "B", parent: "A", attributes: [Attribute(name: "x", type: .integer32)]),
            Entity(name: "B", parent: "A", attributes: [Attribute(name: "y", type: .integer16)]),
        ], sourceFile: "v.yaml")
        let hashes = VersionHash.hashes(of: version)
        #expect(hashes.entities["A"] == VersionHash.hash(of: version.entities[0], in: version))
        #expect(hashes.entities["B"] == VersionHash.hash(of: version.entities[2], in: version))
    }
}
