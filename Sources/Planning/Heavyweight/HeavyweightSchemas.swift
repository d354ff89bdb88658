import Mapping
import ObjectModel
import SQLBuilding

/// What every stage of a heavyweight step writes against: the old store, the staging schema
/// the new one is built in, and the two model versions. Each stage is its own type over it
/// (`StagingStatements`, `StageOneStatements`, `StageTwoStatements`, `StageThreeStatements`,
/// `SwapStatements`).
struct HeavyweightSchemas {
    var store: String
    var staging: String
    var source: ModelVersion
    /// The destination version laid out in the staging schema.
    var destination: StoreLayout
    var destinationVersion: ModelVersion?

    var association: String { HeavyweightMigration.associationTable }
    var associationRows: String { HeavyweightMigration.associationRowsTable }

    /// The source entity of a resolved entity mapping (resolved against `source`).
    func sourceEntity(of mapping: ResolvedEntityMapping) -> Entity {
        guard let entity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        return entity
    }

    /// The source rows an entity mapping reads (`s`): its entities, passing its filter.
    func sourceRows(_ mapping: ResolvedEntityMapping) -> (joins: SourceJoins, condition: SQL) {
        var joins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity(of: mapping))
        joins.add(mapping.filter?.joins ?? [])
        var condition: SQL = "\(ident: SourceJoins.sourceAlias, "_entity") IN (\(literals: mapping.sourceEntities))"
        if let filter = mapping.filter { condition.append(" AND \(SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias).compile(filter))") }
        return (joins, condition)
    }

    /// The staging schema's quoted sequence of `table`'s `_pk`, as `pg_get_serial_sequence` reads it.
    func sequence(of table: String) -> String { quoteIdentifier(staging) + "." + quoteIdentifier(table) }
}
