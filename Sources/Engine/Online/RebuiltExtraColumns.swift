import ObjectModel
import Planning
import PostgresClient

/// `apply --online` rebuilds a table whose entity's rows move out beside itself (`ShadowTable`,
/// `OnlinePlan.rebuiltTables`) with the destination's columns only: a column the team added to
/// it (extra drift) goes with the old table, where the offline step keeps it. Each such column
/// holding values is a loss taking `--allow-data-loss`, as with `--no-backup`. Checked under
/// the store's lock, beside the other objects such a rebuild cannot carry (`StoreDependents`).
enum RebuiltExtraColumns {
    static func check(
        _ plan: MigrationPlan, options: ApplyOptions, model: VersionedModel, contracts: ContractCatalogs, on connection: PostgresConnection
    ) throws {
        guard options.online, !options.allowDataLoss, plan.status == .migrationRequired else { return }
        let rebuilt = Set(plan.steps.flatMap { $0.phases?.rebuiltTables ?? [] })
        guard !rebuilt.isEmpty else { return }
        let snapshot = try StoreCatalog.snapshot(store: plan.store, on: connection)
        guard var drift = try DriftCheck.drift(of: snapshot, model: model, on: connection, contracts: contracts) else { return }
        drift.items = drift.items.filter { $0.kind == .extra && $0.object == .column && rebuilt.contains($0.table) }
        let lost = try ExtraObjectReader.read(drift, store: plan.store, on: connection).filter(\.holdsRows)
        guard !lost.isEmpty else { return }
        throw DataLossNotAllowed(losses: lost.map {
            "\($0) of store \(plan.store) is not in the contract (extra drift, the team's own): apply --online rebuilds table \($0.table) without it, so its values are dropped (the offline step keeps it)"
        })
    }
}
