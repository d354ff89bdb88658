import ObjectModel

/// Infers the mapping between two versions by Core Data's lightweight rules (docs: DESIGN.md,
/// "Lightweight inference"), or refuses, naming every change that blocks it. Pure.
///
/// Inferred: adding or removing entities and properties; renames by renaming identifier;
/// non-optional -> optional; optional -> non-optional with a default (backfilled); to-one ->
/// to-many; ordering, delete rule and count changes; relationships made or added as required
/// (checked against the rows before applying); new parents and sub-entities, properties moved
/// up or down a hierarchy, entities moved out of one; lossless widenings. Transient properties
/// have no storage and are left out.
///
/// Refused: a non-optional attribute added or made so without a default; any other type change;
/// to-many -> to-one; a relationship retargeted at another existing entity; merging two
/// hierarchies; a concrete entity made abstract; one renaming identifier claimed twice.
public enum MappingInference {
    public static func infer(from source: ModelVersion, to destination: ModelVersion) -> InferenceResult {
        // 1. Pair entities by renaming identifier, then by name.
        let matches = EntityMatches(source: source, destination: destination)
        var refusals = matches.matching.contests.map {
            InferenceRefusal.contestedRenamingIdentifier(entity: $0.destination.name, property: nil, identifier: $0.identifier, claimedBy: $0.winner.name)
        }

        // 2. Hierarchies: entities stored in two tables cannot come to share one.
        refusals += HierarchyRules.mergeRefusals(matches)

        // 3. Pair the stored properties of each entity pair, inherited ones included.
        let builder = EntityMappingBuilder(matches: matches, properties: PropertyMatches(matches))

        // 4. One mapping per pair: destination entities in order, then removed source entities.
        var entityMappings: [EntityMapping] = []
        for pair in matches.matching.pairs {
            let (mapping, problems) = builder.mapping(source: pair.source, destination: pair.destination)
            entityMappings.append(mapping)
            refusals += problems
        }

        // 5. A property inherited by several entities is refused once, at its declaring entity.
        var seen: Set<InferenceRefusal> = []
        refusals = refusals.filter { seen.insert($0).inserted }
        if !refusals.isEmpty { return .refused(refusals) }
        return .inferable(InferredMapping(source: source.name, destination: destination.name, entityMappings: entityMappings))
    }
}
