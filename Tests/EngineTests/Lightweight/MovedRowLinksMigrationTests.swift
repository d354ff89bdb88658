import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Links of other rows to rows of an entity moved out of its hierarchy (Dog leaves Animal's
/// table): Core Data runs no delete rule during a migration, so the linking rows stay, their
/// link cleared, whatever the key's delete rule; a required link stops the step before
/// anything changes, naming the rows.
/// Proves Planning/Changes: DetachReferences, DataCheck, CopyRows, DeleteRows.
@Suite(integration) struct MovedRowLinksMigrationTests {
    typealias S = MigratedStore

    static let dog = "\nDog: {parent: Animal, attributes: {bark: string}}"
    static let dogAlone = "\nDog: {attributes: {name: string, bark: string}}"

    /// Animal and Toy, written as `animal` and `toy` say, Dog a sub-entity of Animal in v1 and
    /// a root in v2.
    static func model(animal: String, toy: String) throws -> VersionedModel {
        try S.model([("v1", S.version(animal + dog + "\n" + toy)), ("v2", S.version(animal + dogAlone + "\n" + toy))])
    }

    /// A toy's animal whose inverse has `rule`, or (nil) no inverse.
    static func toyModel(rule: String?, toyAnimal: String = "") throws -> VersionedModel {
        guard let rule else {
            return try model(animal: "Animal: {attributes: {name: string}}", toy: "Toy: {attributes: {label: string}, relationships: {animal: {destination: Animal\(toyAnimal)}}}")
        }
        return try model(
            animal: "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, inverse: animal, toMany: true, deleteRule: \(rule)}}}",
            toy: "Toy: {attributes: {label: string}, relationships: {animal: {destination: Animal, inverse: toys\(toyAnimal)}}}"
        )
    }

    /// Toys 1-300 link to animals (1-300) and every third to a dog (301-600); the toys linking
    /// to dogs, by `_pk`.
    static func linkSomeToysToDogs(on connection: PostgresConnection) throws -> [String] {
        try connection.execute("UPDATE shop.toy SET animal_pk = CASE WHEN _pk % 3 = 0 THEN _pk + 300 ELSE _pk END")
        let toDogs = try connection.execute("""
            SELECT t._pk FROM shop.toy t JOIN shop.animal a ON a._pk = t.animal_pk WHERE a._entity = 'Dog' ORDER BY 1
            """).rows.compactMap { $0[0] }
        #expect(toDogs.count == 100, "the sample links 100 toys to dogs, not \(toDogs.count)")
        return toDogs
    }

    @Test(arguments: [nil, "nullify", "cascade", "deny", "noAction"])
    func aRowLinkingToAMovedRowKeepsItsRowWithTheLinkCleared(rule: String?) throws {
        let model = try Self.toyModel(rule: rule)
        try S.withStore(model) { connection in
            let toDogs = try Self.linkSomeToysToDogs(on: connection)
            let toys = try S.rows("toy", ["label", "animal_pk"], on: connection)
            let dogs = try S.rows("animal", ["name", "bark"], where: "_entity = 'Dog'", on: connection)
            // The links lost need consent: the mapping names the inverse's removal, or the step names the links.
            let refusal = #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            let named = rule == nil
                ? "Toy.animal: its links to rows of Dog are cleared (Dog moved out of animal, so the link cannot stay)"
                : "Dog.toys removed: its links are dropped"
            #expect(refusal?.losses == ["step 1 of 1 ('v1' -> 'v2') " + named])
            try S.migrate(model, allowDataLoss: true, on: connection)
            // Every toy stays; those linking to dogs lost the link, the others kept theirs.
            #expect(try S.rows("toy", ["label", "animal_pk"], on: connection) == toys.map { toDogs.contains($0[0]!) ? [$0[0], $0[1], nil] : $0 })
            #expect(try S.rows("dog", ["name", "bark"], on: connection) == dogs)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// A toy must have an animal: a toy linking to a dog cannot keep it, nor lose it; the
    /// step's first statements name those toys and stop it, the store untouched. Relinked to
    /// animals, the step runs.
    @Test(arguments: [nil, "cascade"])
    func aRequiredLinkToAMovedRowStopsTheStepNamingTheRows(rule: String?) throws {
        let model = try Self.toyModel(rule: rule, toyAnimal: ", optional: false")
        try S.withStore(model) { connection in
            let toDogs = try Self.linkSomeToysToDogs(on: connection)
            let toys = try S.rows("toy", ["label", "animal_pk"], on: connection)
            let animals = try S.rows("animal", ["_entity", "name", "bark"], on: connection)
            let failure = #expect(throws: StepFailure.self) { try S.migrate(model, allowDataLoss: true, on: connection) }
            let error = failure?.underlying as? PostgresError
            #expect(error?.message == "100 rows of toy whose required animal_pk links to rows of Dog (moved out of animal); first _pk: \(toDogs.prefix(5).joined(separator: ", "))")
            #expect(error?.sqlState == .checkViolation)
            #expect(failure?.statement?.summary.hasPrefix("check: no rows of toy whose required animal_pk") == true)
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.rows("toy", ["label", "animal_pk"], on: connection) == toys)
            #expect(try S.rows("animal", ["_entity", "name", "bark"], on: connection) == animals)
            try connection.execute("UPDATE shop.toy SET animal_pk = _pk WHERE _pk % 3 = 0")
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("toy", ["label", "animal_pk"], on: connection) == toys.map { [$0[0], $0[1], $0[0]] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Required only for one entity of the toy's hierarchy (a sub-entity's required link, a
    /// check scoped to it): its rows stop the step; a sibling's links to dogs alone are cleared.
    @Test func aLinkRequiredForASubEntityStopsTheStepForItsRowsOnly() throws {
        let model = try Self.model(
            animal: "Animal: {attributes: {name: string}}",
            toy: "Item: {attributes: {label: string}, relationships: {animal: {destination: Animal}}}\nToy: {parent: Item, relationships: {pet: {destination: Animal, optional: false}}}"
        )
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.item SET animal_pk = _pk % 300 + 301, pet_pk = CASE WHEN _entity = 'Toy' THEN _pk % 300 + 1 END")
            try connection.execute("UPDATE shop.item SET pet_pk = 450 WHERE _pk IN (SELECT _pk FROM shop.item WHERE _entity = 'Toy' ORDER BY _pk LIMIT 2)")
            let failure = #expect(throws: StepFailure.self) { try S.migrate(model, allowDataLoss: true, on: connection) }
            #expect((failure?.underlying as? PostgresError)?.message.hasPrefix("2 rows of item whose required pet_pk links to rows of Dog (moved out of animal)") == true)
            try connection.execute("UPDATE shop.item SET pet_pk = 1 WHERE pet_pk = 450")
            let items = try S.rows("item", ["_entity", "label", "pet_pk"], on: connection)
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("item", ["_entity", "label", "pet_pk", "animal_pk"], on: connection) == items.map { $0 + [nil] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Animal's own key (a mother): the animals that stay lose their link to a dog, keep the
    /// others; nothing is deleted, whatever the inverse's rule.
    @Test(arguments: ["nullify", "cascade", "deny"])
    func anAnimalLinkingToAMovedDogKeepsItsRowWithTheLinkCleared(rule: String) throws {
        let animal = "Animal: {attributes: {name: string}, relationships: {mother: {destination: Animal, inverse: young}, young: {destination: Animal, inverse: mother, toMany: true, deleteRule: \(rule)}}}"
        let model = try S.model([("v1", S.version(animal + Self.dog)), ("v2", S.version(animal + Self.dogAlone))])
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.animal SET mother_pk = CASE WHEN _pk % 2 = 0 THEN 601 - _pk ELSE 300 - _pk % 300 END")
            let animals = try S.rows("animal", ["name", "mother_pk"], where: "_entity = 'Animal'", on: connection)
            #expect(animals.filter { Int($0[2]!)! > 300 }.count == 150, "half the animals have a dog as mother")
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("animal", ["name", "mother_pk"], on: connection) == animals.map { Int($0[2]!)! > 300 ? [$0[0], $0[1], nil] : $0 })
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dog").int(0, "n") == 300)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// A toy's to-many without inverse (a join table of Toy): its links to dogs go with the
    /// dogs, the toys and their other links stay; `plan` names the links dropped.
    @Test func aJoinTableLinkingToMovedRowsDropsThoseLinksOnly() throws {
        let model = try Self.model(animal: "Animal: {attributes: {name: string}}", toy: "Toy: {attributes: {label: string}, relationships: {animals: {destination: Animal, toMany: true}}}")
        try S.withStore(model) { connection in
            try connection.execute("INSERT INTO shop.toy__animals (toy_pk, animals_pk) SELECT _pk, _pk + 300 FROM shop.toy WHERE _pk % 3 = 0 ON CONFLICT DO NOTHING")
            let links = try connection.execute("SELECT toy_pk, animals_pk FROM shop.toy__animals l JOIN shop.animal a ON a._pk = l.animals_pk WHERE a._entity = 'Animal' ORDER BY 1, 2").rows
            let toDogs = try connection.execute("SELECT count(*) AS n FROM shop.toy__animals l JOIN shop.animal a ON a._pk = l.animals_pk WHERE a._entity = 'Dog'").int(0, "n") ?? 0
            #expect(links.count > 50 && toDogs > 50, "\(links.count) links to animals, \(toDogs) to dogs")
            let toys = try S.rows("toy", ["label"], on: connection)
            let refusal = #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            #expect(refusal?.losses == ["step 1 of 1 ('v1' -> 'v2') Toy.animals: its links to rows of Dog are dropped (Dog moved out of animal, so the link cannot stay)"])
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try connection.execute("SELECT toy_pk, animals_pk FROM shop.toy__animals ORDER BY 1, 2").rows == links)
            #expect(try S.rows("toy", ["label"], on: connection) == toys)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
