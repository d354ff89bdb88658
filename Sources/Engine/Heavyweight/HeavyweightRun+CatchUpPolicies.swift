import Foundation
import ObjectModel
import Planning
import SQLBuilding

/// The streamed parts of a catch-up round (`OnlineCatchUp.CatchUpStep`): stage 1 again for the
/// round's source rows, through the entity mapping's policy when it has one, and a policy's
/// stage 2 hooks again for the rows made from them (`CatchUpPolicies` in planning); the hooks
/// are told the round's source rows (`CatchUpRoundScope`).
extension HeavyweightRun {
    /// Online, what the instance writers record and where kept-key tables take new keys.
    var onlineInstances: OnlineInstances? {
        guard isOnline, let catchUp = step.onlineCatchUp else { return nil }
        return OnlineInstances(store: migrator.store, keptKeys: catchUp.keptKeys)
    }

    func streamAgain(_ stream: StreamedMapping, source: ModelVersion, destination: ModelVersion) throws {
        let pass = PlannedPass(stage: .createInstances, entityMapping: stream.entityMapping, execution: .streaming, statements: [], stream: stream)
        let context = try self.context(for: pass, stream: stream, source: source, destination: destination)
        context.catchUpRound = catchUpRound(of: stream.entityMapping)
        let policy = try policyInstance(for: stream.entityMapping)
        _ = try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { _ in }.createInstances()
    }

    func relateAgain(_ entityMapping: String, sourceKeys: SQL, source: ModelVersion, destination: ModelVersion) throws {
        let pass = PlannedPass(stage: .createRelationships, part: .toMany, entityMapping: entityMapping, execution: .streaming, statements: [])
        let context = try self.context(for: pass, stream: nil, source: source, destination: destination)
        context.catchUpRound = catchUpRound(of: entityMapping)
        let policy = try policyInstance(for: entityMapping)
        _ = try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { _ in }
            .createRelationships(mappingName: entityMapping, sourceKeys: sourceKeys)
    }

    /// What the hooks of `entityMapping` are told in a round: nil when it runs whole there.
    func catchUpRound(of entityMapping: String) -> CatchUpRoundScope? {
        guard let catchUp = step.onlineCatchUp, !catchUp.rerunWhole.contains(entityMapping),
              let table = step.passes.first(where: { $0.stage == .createInstances && $0.entityMapping == entityMapping })?.sourceTable else { return nil }
        return CatchUpRoundScope(sourceTable: table, sourceKeys: catchUp.keys(of: table))
    }
}
