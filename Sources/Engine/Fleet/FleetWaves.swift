/// Which wave each store of a fleet is in: the fleet file's waves in order, each taking its
/// count of the stores left (in the fleet's stable order) or the stores it names; a wave
/// without `stores` takes every store left. Stores no wave took make a last wave, `rest`.
/// Without waves, one wave `all` holds every store.
public enum FleetWaves {
    public struct Assignment: Sendable {
        public var names: [String]
        /// Each store, by its index in the states assigned, with its wave, in the run's order
        /// (indices: the states, a fleet's largest array, are never copied).
        public var order: [(index: Int, wave: Int)]
    }

    public static func assign(_ states: [FleetStoreState], waves: [FleetWave], file: String) throws -> Assignment {
        guard !waves.isEmpty else { return Assignment(names: ["all"], order: states.indices.map { ($0, 0) }) }
        var left = Array(states.indices)
        var assignment = Assignment(names: [], order: [])
        for (index, wave) in waves.enumerated() {
            assignment.names.append(wave.name)
            let taken: [Int]
            switch wave.stores {
            case .count(let count):
                taken = Array(left.prefix(count))
            case .rest:
                taken = left
            case .named(let names):
                let wanted = Set(names)
                taken = left.filter { wanted.contains(states[$0].store.description) }
                let found = Set(states.map(\.store.description))
                if let unknown = names.first(where: { !found.contains($0) }) {
                    throw FleetFileIssue(file: file, key: "waves[\(index)].stores", message: "wave '\(wave.name)' names \(unknown), which is no store of the fleet")
                }
            }
            let takenStores = Set(taken.map { states[$0].store })
            left.removeAll { takenStores.contains(states[$0].store) }
            assignment.order += taken.map { ($0, index) }
        }
        if !left.isEmpty {
            assignment.names.append(assignment.names.contains("rest") ? "rest (stores no wave took)" : "rest")
            assignment.order += left.map { ($0, waves.count) }
        }
        return assignment
    }
}
