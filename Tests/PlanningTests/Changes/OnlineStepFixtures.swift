import Testing
@testable import Planning

/// What the change suites share to read the phases `apply --online` plans for a step, and the
/// models several of them plan from.
protocol OnlineStepFixtures {}

extension OnlineStepFixtures {
    static func phases(_ source: String, _ destination: String) throws -> [OnlinePhase] {
        let online = try #require(try LightweightFixtures.step(source, destination).phases)
        #expect(online.refusals == [])
        return online.phases
    }

    /// A rule row's offline step is its golden SQL.
    static func expectOfflineSQL(_ row: RuleCase, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected, sourceLocation: sourceLocation)
    }

    /// The phases `apply --online` plans for a rule row's edit are `online`.
    static func expectOnlineSQL(_ row: RuleCase, _ online: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(sql(try phases(row.source, row.destination)) == online, sourceLocation: sourceLocation)
    }

    static func sql(_ phases: [OnlinePhase]) -> [String] {
        phases.flatMap { $0.statements.map(\.sql.text) + ($0.batches.map { [$0.template.text] } ?? []) }
    }

    static var dogLeavesAnimals: (String, String) { (
        """
        Animal: {attributes: {name: string}}
        Dog: {parent: Animal, attributes: {bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
        Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
        """,
        """
        Animal: {attributes: {name: string}}
        Dog: {attributes: {name: string, bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
        Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
        """
    ) }

    /// Toy and Animal with `animal` and `toy` for the relationships; Dog leaves Animal's table.
    static func toysOfAnimals(animal: String, toy: String) -> (String, String) {
        let withToys = { (base: String) in base.replacingOccurrences(of: "Animal: {attributes: {name: string}}", with: animal) + "\n" + toy }
        return (withToys(dogLeavesAnimals.0), withToys(dogLeavesAnimals.1))
    }

    /// A toy's animal whose inverse has `rule`.
    static func toysOfAnimals(rule: String, toyAnimal: String = "") -> (String, String) {
        toysOfAnimals(
            animal: "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, inverse: animal, toMany: true, deleteRule: \(rule)}}}",
            toy: "Toy: {attributes: {label: string}, relationships: {animal: {destination: Animal, inverse: toys\(toyAnimal)}}}"
        )
    }

    static func cuisines(ordered: Bool) -> String {
        """
        Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true, ordered: \(ordered)}}}
        Recipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
        """
    }

    static func refusals(_ change: any SchemaChange) -> [OnlineRefusal] {
        OnlinePlanner.plan([change], schema: "s").refusals
    }

    static var joinTableLinks: SourceLinks { SourceLinks(table: "old_links", a: "owner", b: "target", requiredNotNull: nil, origins: [.table("old_links")]) }
}
