// The policy of Examples/people, built by the example executable (Examples/PolicyExample) and
// run by the engine tests: the code docs/custom-policies.md walks through.
import Engine
import Mapping

/// Moves each person's street and city into an Address, one per distinct pair.
public final class PersonSplitPolicy: EntityMigrationPolicy {
    public init() {}

    /// Addresses made in this pass, by street and city.
    private var addresses: [String: DestinationInstance] = [:]

    public func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
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
