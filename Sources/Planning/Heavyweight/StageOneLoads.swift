import SQLBuilding

/// How stage 1 of a heavyweight step loads the new tables: which are loaded bare, their primary
/// key built once their rows are in (an index built over the rows is several times faster than
/// one kept up row by row), and which entity mappings' stage 1 must commit before another's
/// starts (the passes of `apply --jobs` otherwise run at once, on several connections).
struct StageOneLoads {
    /// Destination tables whose rows come from set-based stage 1 passes alone: no entity
    /// mapping streams into them, and no policy (which may insert into any table) runs in the
    /// step.
    var bareTables: Set<String>
    /// Per bare table, the entity mapping whose stage 1 pass is the last to fill it, which
    /// builds the primary key after its rows.
    var keyBuilders: [String: String]

    init(_ mappings: [ResolvedEntityMapping], streams: (ResolvedEntityMapping) -> Bool) {
        var bare: Set<String> = []
        var builders: [String: String] = [:]
        if !mappings.contains(where: { $0.policy != nil }) {
            let byTable = Dictionary(grouping: mappings, by: \.destinationTable)
            for (table, fillers) in byTable where !fillers.contains(where: streams) {
                bare.insert(table)
                builders[table] = fillers.last?.name
            }
        }
        bareTables = bare
        keyBuilders = builders
    }

    /// The primary key of `mapping`'s destination table, when its stage 1 pass is the last to
    /// fill that table bare.
    func primaryKey(after mapping: ResolvedEntityMapping, in schemas: HeavyweightSchemas) -> [PlannedStatement] {
        guard keyBuilders[mapping.destinationTable] == mapping.name,
              let table = schemas.destination.tables.first(where: { $0.name == mapping.destinationTable }) else { return [] }
        return [PlannedStatement(
            "ALTER TABLE \(ident: schemas.staging, table.name) ADD PRIMARY KEY (\(idents: table.primaryKey))", lock: .accessExclusive,
            summary: "stage 1, \(mapping.name): primary key of \(schemas.staging).\(table.name), built over its rows"
        )]
    }

    /// The entity mappings before `index` whose stage 1 pass must have committed before that of
    /// `mappings[index]` starts: those filling the same table (keys come in mapping order from
    /// one sequence) and those whose association its INSERT reads for a to-one link.
    static func waits(of index: Int, in mappings: [ResolvedEntityMapping]) -> [String] {
        let mapping = mappings[index]
        let linked = Set(mapping.toOneLinks.filter { mapping.linkedInStageOne.contains($0.column) && !mapping.linkedByKey.contains($0.column) }.map(\.mappingName))
        return mappings.prefix(index).filter { $0.destinationTable == mapping.destinationTable || linked.contains($0.name) }.map(\.name)
    }
}
