import Foundation
import Testing
import PostgresClient
import TestSupport
import SQLBuilding
@testable import Engine

/// When an online heavyweight test's writes happen during `apply --online`: the concurrent
/// writer starts with the prepare pass; `duringStageOne` is written once the stage 1 pass of
/// `first` is done (rows it copied, rows later passes have not reached); the writer is waited
/// for once that of `last` is done (the same pass may be both); `betweenRounds` is written after the first catch-up round,
/// for the last round under the write guard.
struct OnlineApplyScript {
    var writer: TwinWriter
    var first: String
    var duringStageOne: [SQL]
    var last: String
    var betweenRounds: [SQL]
    /// Called with every event, after the writes above.
    var onEvent: (ProgressEvent) throws -> Void = { _ in }

    /// The kitchen's writes (`OnlineHeavyweightTests`): the concurrent writer's, those once the
    /// chefs are copied and those between the rounds.
    static func kitchen(on connection: PostgresConnection) throws -> OnlineApplyScript {
        typealias Online = OnlineHeavyweightTests
        return OnlineApplyScript(
            writer: try TwinWriter.script(sessionsLike: connection, Online.concurrent), first: "ChefToChef", duringStageOne: Online.duringStageOne,
            last: "RecipeToRecipe", betweenRounds: Online.betweenRounds
        )
    }

    /// Applies `migrator` online with few writes left for the last round; expects that no
    /// write failed and that a catch-up round ran. Returns the report and the events.
    func apply(_ migrator: StoreMigrator, on connection: PostgresConnection) throws -> (ApplyReport, [ProgressEvent]) {
        var options = ApplyOptions()
        options.online = true
        options.catchUpRemainder = 2
        var events: [ProgressEvent] = []
        var hookFailure: Error?
        let report = try migrator.apply(options: options, onProgress: { event in
            events.append(event)
            do {
                switch (event.kind, event.stage, event.entityMapping) {
                case (.passStarted, .pass(.prepare), _):
                    writer.start()
                case (.passFinished, .pass(.createInstances), first):
                    for write in duringStageOne { try connection.execute(write) }
                    if first == last { #expect(writer.waitUntilDone(), "the writer never finished") }
                case (.passFinished, .pass(.createInstances), last):
                    #expect(writer.waitUntilDone(), "the writer never finished")
                case (.rows, .catchUp, _) where events.filter({ $0.stage == .catchUp }).count == 1:
                    for write in betweenRounds { try connection.execute(write) }
                default:
                    break
                }
                try onEvent(event)
            } catch {
                hookFailure = error
            }
        })
        #expect(hookFailure == nil && writer.failure == nil, "\(String(describing: hookFailure)) \(String(describing: writer.failure))")
        #expect(events.contains { $0.stage == .catchUp }, "a catch-up round ran before the write guard")
        return (report, events)
    }
}
