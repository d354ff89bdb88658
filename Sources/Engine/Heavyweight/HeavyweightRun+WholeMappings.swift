import Planning
import PostgresClient
import SQLBuilding

/// Entity mappings run again whole under the write guard of `apply --online`
/// (`WholeMappingRerun` in planning): the catch-up rounds before the guard leave their rows as
/// the bulk pass made them, so only an online run can finish a staging schema they have run in.
extension HeavyweightRun {
    /// Continuing without `--online` a staging schema in which catch-up rounds ran while an
    /// entity mapping waits to run again whole: stops, nothing changed.
    func requireNoMappingLeftToRunWhole() throws {
        guard !isOnline, let catchUp = step.onlineCatchUp, !catchUp.rerunWhole.isEmpty, try hasRowLog(catchUp) else { return }
        let position = try connection.execute("SELECT max(mapped_through) AS position FROM \(ident: staging, OnlineCatchUp.positionTable)")
        guard (position.int(0, "position") ?? 0) > 0 else { return }
        let names = catchUp.rerunWhole.joined(separator: ", ")
        throw StagingMismatch(
            staging: staging,
            reason: "holds catch-up rounds of an online run, which leave \(names) to run again whole through its policy under the write guard; continue it with apply --online"
        )
    }
}
