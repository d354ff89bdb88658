// An orchestrator executable with a custom entity migration policy registered: what
// docs/custom-policies.md walks through. Run it like `orchestrator`:
//   swift run orchestrator-with-policies apply --model Examples/people --database-url …
import Engine
import Mapping
import OrchestratorCLI

/// Moves each person's street and city into an Address, one per distinct pair.
final class PersonSplitPolicy: EntityMigrationPolicy {
    /// Addresses made in this pass, by street and city.
    private var addresses: [String: DestinationInstance] = [:]

    func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
        // The Person the mapping describes: its name, as Xcode's default `$source.name`.
        let person = try mapping.createDestinationInstance(for: source)
        guard source["street"] != .null || source["city"] != .null else { return }
        let key = "\(source["street"])\u{1}\(source["city"])"
        let address: DestinationInstance
        if let known = addresses[key] {
            address = known
        } else {
            address = try mapping.insertInstance(of: "Address")
            address["street"] = source["street"]
            address["city"] = source["city"]
            addresses[key] = address
        }
        person.setRelationship("address", to: address)
    }
}

PolicyRegistry.shared.register("PersonSplit") { PersonSplitPolicy() }
Orchestrator.main()
