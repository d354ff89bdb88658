import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Hierarchies changed on a store holding rows: new sub-entities and parents, properties moved
/// up and down, an entity moved out.
/// Proves Planning/Changes: AddColumn, AddCheck, DropConstraint, RenameTable, BackfillNulls,
/// ClearValues, CopyRows, DeleteRows, FillJoinTable, ResetIdentity.
@Suite(integration) struct HierarchyMigrationTests {
    typealias S = MigratedStore

    static let animals = S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}")

    @Test func addingASubEntityKeepsEveryRow() throws {
        let model = try S.model([("v1", S.version("Animal: {attributes: {name: string}}")), ("v2", Self.animals)])
        try S.withStore(model) { connection in
            let before = try S.rows("animal", ["_entity", "name"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("animal", ["_entity", "name", "bark"], on: connection) == before.map { $0 + [nil] })
            try connection.execute("INSERT INTO shop.animal (_entity, name, bark) VALUES ('Dog', 'Rex', 'woof')")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func addingAParentAboveARootRenamesTheTableAndKeepsEveryRow() throws {
        let model = try S.model([
            ("v1", S.version("Dog: {attributes: {bark: string}}")),
            ("v2", S.version("Animal: {attributes: {legs: {type: int16, optional: false, default: 4}}}\nDog: {parent: Animal, attributes: {bark: string}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("dog", ["_entity", "bark"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("animal", ["_entity", "bark", "legs"], on: connection) == before.map { $0 + ["4"] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func movingARequiredPropertyUpBackfillsTheRowsThatLackedIt() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: {type: int16, optional: false, default: 4}}}")),
            ("v2", S.version("Animal: {attributes: {name: string, legs: {type: int16, optional: false, default: 4}}}\nDog: {parent: Animal}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("animal", ["_entity", "legs"], on: connection)
            #expect(before.contains { $0[1] == "Dog" && $0[2] != "4" })
            try S.migrate(model, on: connection)
            #expect(try S.rows("animal", ["_entity", "legs"], on: connection) == before.map { [$0[0], $0[1], $0[2] ?? "4"] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func movingAPropertyDownClearsItInTheRowsThatLostIt() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string, bark: string}}\nDog: {parent: Animal}")),
            ("v2", Self.animals),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("animal", ["_entity", "bark"], on: connection)
            #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("animal", ["_entity", "bark"], on: connection) == before.map { [$0[0], $0[1], $0[1] == "Dog" ? $0[2] : nil] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Dog leaves Animal's table for its own; Owner links to dogs (a to-one of Dog, kept in the
    /// rows that move, and a to-one of Owner pointing at them, which keeps its values).
    static func dogLeavesAnimals() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Animal: {attributes: {name: string}}
                Dog: {parent: Animal, attributes: {bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
                Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
                """)),
            ("v2", S.version("""
                Animal: {attributes: {name: string}}
                Dog: {attributes: {name: string, bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
                Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
                """)),
        ])
    }

    @Test func movingAnEntityOutOfItsHierarchyMovesItsRowsKeepingPkAndLinks() throws {
        let model = try Self.dogLeavesAnimals()
        try S.withStore(model) { connection in
            let dogs = try S.rows("animal", ["name", "bark", "owner_pk"], where: "_entity = 'Dog'", on: connection)
            let animals = try S.rows("animal", ["name"], where: "_entity = 'Animal'", on: connection)
            let favourites = try S.rows("owner", ["favourite_pk"], on: connection)
            #expect(dogs.count == 300 && animals.count == 300)
            try S.migrate(model, on: connection)
            #expect(try S.rows("dog", ["name", "bark", "owner_pk"], on: connection) == dogs)
            #expect(try S.rows("animal", ["name"], on: connection) == animals)
            #expect(try S.rows("owner", ["favourite_pk"], on: connection) == favourites)
            // New dogs continue after the largest moved _pk.
            let inserted = try connection.execute("INSERT INTO shop.dog (name) VALUES ('Rex') RETURNING _pk").int(0, "_pk")!
            #expect(inserted > Int64(dogs.compactMap { $0[0].flatMap { Int64($0) } }.max()!))
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func movingAnEntityOutKeepsTheLinksItInherited() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {parent: Animal}\nToy: {attributes: {label: string}}")),
            ("v2", S.version("Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nToy: {attributes: {label: string}}")),
        ])
        try S.withStore(model) { connection in
            let links = "SELECT l.animal_pk, l.toys_pk FROM shop.animal__toys l JOIN shop.animal a ON a._pk = l.animal_pk WHERE a._entity = "
            let dogLinks = try connection.execute("\(unsafeRaw: links)'Dog' ORDER BY 1, 2").rows
            let animalLinks = try connection.execute("\(unsafeRaw: links)'Animal' ORDER BY 1, 2").rows
            #expect(dogLinks.count == 600 && animalLinks.count == 600)
            try S.migrate(model, on: connection)
            #expect(try connection.execute("SELECT dog_pk, toys_pk FROM shop.dog__toys ORDER BY 1, 2").rows == dogLinks)
            #expect(try connection.execute("SELECT animal_pk, toys_pk FROM shop.animal__toys ORDER BY 1, 2").rows == animalLinks)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
