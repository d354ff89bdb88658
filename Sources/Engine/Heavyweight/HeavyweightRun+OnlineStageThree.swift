import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// Stage 3 of `apply --online` split around the write guard (`OnlineStageThree`,
/// docs/online-migrations.md): the indexes and foreign keys are built before the guard, so
/// that writes wait only for the last round and the checks of the rows it wrote.
extension HeavyweightRun {
    /// Whether the build has committed (this run's or an interrupted one's).
    func isStageThreeBuilt() throws -> Bool {
        guard let stageThree = step.onlineStageThree else { return false }
        return try connection.execute(stageThree.isBuilt).bool(0, "present") == true
    }

    /// Build attempts before stage 3 is left whole to the guard.
    static let buildAttempts = 3

    /// `OnlineStageThree.build` in one transaction, after `mapPending`. A row breaking a
    /// constraint may be a write the round has not mapped yet (it read the old store after
    /// the log): the build is tried again after another round, `buildAttempts` times in all.
    /// Returns false, with nothing built, when every attempt failed so (stage 3 then runs
    /// whole under the guard, failing there as offline when the rows are wrong), or when the
    /// role may not set `session_replication_role`, which the rounds after the build need.
    func buildStageThree(after mapPending: () throws -> Void) throws -> Bool {
        guard let stageThree = step.onlineStageThree else { return false }
        for _ in 1...Self.buildAttempts {
            try mapPending()
            do {
                try options.executionPolicy.transaction(on: connection) {
                    // First: it fails at once for a role without the right to set it.
                    _ = try connection.execute(OnlineStageThree.withoutForeignKeys)
                    for statement in stageThree.build { _ = try execute(statement) }
                }
                return true
            } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
                return false
            } catch let failure as PassFailure where (failure.underlying as? PostgresError)?.sqlState?.errorClass == "23" {
                continue
            }
        }
        return false
    }

    /// In a round's transaction once built: the foreign keys neither check the rows the round
    /// makes again nor act on those it deletes (`OnlineStageThree.guarded` checks them).
    func roundWithoutForeignKeys(_ body: () throws -> Void) throws {
        let built = try isStageThreeBuilt()
        if built { _ = try connection.execute(OnlineStageThree.withoutForeignKeys) }
        try body()
        if built { _ = try connection.execute(OnlineStageThree.withForeignKeys) }
    }

    /// The validate pass as this staging schema needs it: once the build is there (a run
    /// interrupted after it), only what `OnlineStageThree.guarded` leaves.
    func validatePass(_ pass: PlannedPass) throws -> PlannedPass {
        guard pass.stage == .validate, let stageThree = step.onlineStageThree, try isStageThreeBuilt() else { return pass }
        var guarded = pass
        guarded.statements = stageThree.guarded
        return guarded
    }
}
