import Mapping
import ObjectModel

/// Source rows a heavyweight step does not carry into the new store, one `dataLoss` hazard per
/// source entity naming its estimated rows: rows no entity mapping reads (none names the
/// entity, or a `remove` mapping does), and rows that every entity mapping reading them
/// filters (those the filters reject). Core Data drops such rows without a word; here `apply`
/// runs the step only with `--allow-data-loss`, a backup being a safety net, not consent.
enum RowsLeftBehind {
    static func hazards(
        of mapping: MappingModel, resolved: [ResolvedEntityMapping], source: ModelVersion, estimates: RowEstimates, backup: String?
    ) -> [Hazard] {
        let kept = backup.map { "kept only in the backup schema \($0)" } ?? "dropped with the old store"
        var hazards: [Hazard] = []
        for entity in source.entities where !entity.isAbstract {
            let readers = resolved.filter { $0.sourceEntities.contains(entity.name) }
            let root = source.root(of: entity)
            var rows = estimates.rows(
                of: entity.name, in: StoreNaming.tableName(entity: root.name),
                tableEntities: source.hierarchy(of: root).filter { !$0.isAbstract }.map(\.name)
            )
            let why: String
            if readers.isEmpty {
                let ancestry = Set(source.ancestry(of: entity).map(\.name))
                if let removal = mapping.entityMappings.first(where: { $0.type == .remove && $0.sourceEntity.map(ancestry.contains) == true }) {
                    why = "the remove mapping \(removal.name) drops them"
                } else {
                    why = "no entity mapping reads them"
                }
            } else if readers.allSatisfy({ $0.filter != nil }) {
                let names = readers.map(\.name).joined(separator: ", ")
                why = readers.count == 1 ? "those the filter of \(names) rejects" : "those the filters of \(names) all reject"
                // How many the filters reject is known only once they run.
                rows?.isUpperBound = true
            } else {
                continue
            }
            let count = rows.map { " (\($0))" } ?? ""
            hazards.append(Hazard(
                code: Hazard.Code.dataLoss, message: "rows of \(entity.name)\(count) do not reach the new store: \(why); \(kept)",
                entity: entity.name, estimatedRows: rows
            ))
        }
        return hazards
    }
}
