import Mapping
import ObjectModel
import SQLBuilding

/// A heavyweight step for a mapping model whose expressions all compile to SQL: the new store
/// is built set-based in `<store>~staging` (a name no one gives a schema by hand, so the drop before building can only hit our own leftovers) beside the old one, then swapped in, the old one
/// kept as `<store>~` (Core Data's backup). Everything runs in the step's one transaction, so a
/// failure leaves the store as it was; passes that commit separately and resume are not built yet.
public enum HeavyweightMigration {
    public static func stagingSchema(for store: String) -> String { StoreNaming.shortened(store + "~staging") }
    public static func backupSchema(for store: String) -> String { StoreNaming.shortened(store + "~") }
    /// Which destination row each entity mapping made from which source row (Core Data's
    /// association table), kept in the staging schema until the swap.
    static let associationTable = "_association"

    /// 1. Lock the old store's tables against writes (rows written meanwhile would be lost).
    /// 2. Create the staging schema, the destination tables bare (to-one columns nullable
    ///    until stage 2 has set them) and the association table.
    /// 3. Stage 1, per entity mapping: associate each source row passing the filter with a new
    ///    destination key, then insert the destination rows with their attributes.
    /// 4. Stage 2: set every to-one column through the association table.
    /// 5. Stage 3: the destination's NOT NULLs, checks, foreign keys, uniques and indexes,
    ///    which validate the new rows.
    /// 6. Swap: the old schema becomes `<store>~` (replacing an earlier backup), staging
    ///    becomes the store, the association table goes.
    static func step(mapping: MappingModel, from source: ModelVersion, to destination: ModelVersion, schema: String) throws(HeavyweightRefusal) -> PlannedStep {
        var resolved: [ResolvedEntityMapping] = []
        var reasons: [String] = []
        for definition in mapping.entityMappings {
            do {
                if let entityMapping = try ResolvedEntityMapping.resolve(definition, in: mapping, source: source, destination: destination) {
                    resolved.append(entityMapping)
                }
            } catch {
                reasons += error.reasons
            }
        }
        if !reasons.isEmpty { throw HeavyweightRefusal(reasons: reasons.map { "'\(source.name)' -> '\(destination.name)': \($0)" }) }

        let staging = stagingSchema(for: schema)
        let sourceLayout = StoreLayout(version: source, schema: schema)
        let layout = StoreLayout(version: destination, schema: staging)
        let builder = StatementBuilder(store: schema, staging: staging, source: source, destination: layout)
        var statements: [PlannedStatement] = []
        statements.append(PlannedStatement(
            "LOCK TABLE \(SQL.joined(sourceLayout.tables.map { "\(ident: schema, $0.name)" }, separator: ", ")) IN SHARE MODE",
            lock: .share, summary: "keep writes out of \(schema) until the new store is in place"
        ))
        statements += builder.createStaging()
        for entityMapping in resolved { statements += builder.stageOne(entityMapping) }
        statements.append(PlannedStatement("ANALYZE \(ident: staging, associationTable)", lock: .shareUpdateExclusive, summary: "statistics of the association table for stage 2"))
        for entityMapping in resolved { statements += builder.stageTwo(entityMapping) }
        for entityMapping in resolved { statements += builder.stageTwoToMany(entityMapping) }
        statements += builder.stageThree()
        statements += builder.swap()

        let sourceTables = Set(resolved.map(\.sourceTable)).sorted().joined(separator: ", ")
        return PlannedStep(
            kind: .heavyweight, from: source.name, to: destination.name, statements: statements,
            hazards: [
                .tableRewrite("every table is rebuilt in \(staging) from \(mapping.file) and swapped in; the old store is kept as schema \(backupSchema(for: schema))"),
                .fullScan("every row of \(sourceTables.isEmpty ? "no table" : sourceTables) is read"),
                .longLock("writes to \(schema) wait until the migration commits"),
            ]
        )
    }
}
