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
        // As the hashes of every entity computed alone give it (and the release before this one did).
        #expect(hashes.model == "4959ebdaae55c293b2a9c1e474c3078980c1b75e91285e0ffad3aae09be6033b")
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
        // Unique entity names: a child's attribute named as its parent's relationship, siblings,
        // a missing parent and a loop each hash as the entity alone does.
        let tied = ModelVersion(name: "v", entities: [
            Entity(name: "C", parent: "B", attributes: [Attribute(name: "z", type: .string)]),
            Entity(name: "A", relationships: [Relationship(name: "x", destination: "A")]),
            Entity(name: "B", parent: "A", attributes: [Attribute(name: "x", type: .integer32), Attribute(name: "w", type: .string)]),
            Entity(name: "D", parent: "A", attributes: [Attribute(name: "a", type: .string)]),
            Entity(name: "E", parent: "Nowhere", attributes: [Attribute(name: "b", type: .string)]),
            Entity(name: "F", parent: "G"), Entity(name: "G", parent: "F", attributes: [Attribute(name: "c", type: .string)]),
        ], sourceFile: "v.yaml")
        let tiedHashes = VersionHash.hashes(of: tied)
        for entity in tied.entities {
            #expect(tiedHashes.entities[entity.name] == VersionHash.hash(of: entity, in: tied), "\(entity.name)")
        }
    }
}
