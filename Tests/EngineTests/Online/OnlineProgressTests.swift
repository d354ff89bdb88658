import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// `apply --online` says where it is: a lightweight step's phases and a heavyweight step's
/// online stages each start and finish with a progress event, batches report their rows.
@Suite(integration) struct OnlineProgressTests {
    typealias S = MigratedStore

    @Test func everyOnlinePhaseOfALightweightStepStartsAndFinishesWithAnEventNamingIt() throws {
        let model = try OnlineMigrationTests.model()
        try S.withStore(model, rows: 40) { connection in
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            let online = try #require(try migrator.plan(mode: .online).steps.first?.phases)
            var events: [ProgressEvent] = []
            _ = try migrator.apply(options: ApplyOptions(batchSize: 7, online: true), onProgress: { events.append($0) })
            let phaseEvents = events.filter { $0.stage == .online }
            let started = phaseEvents.filter { $0.kind == .passStarted }
            #expect(started.map(\.phase) == online.phases.map(\.summary))
            #expect(started.map(\.pass) == Array(1...online.phases.count))
            #expect(started.allSatisfy { $0.passCount == online.phases.count && $0.stepKind == "lightweight" })
            #expect(phaseEvents.filter { $0.kind == .passFinished }.map(\.phase) == online.phases.map(\.summary))
            // A batched phase reports the rows done after each batch of 7 keys.
            let batched = try #require(online.phases.firstIndex { $0.execution == .batches })
            let batches = phaseEvents.filter { $0.kind == .rows && $0.pass == batched + 1 }.map(\.rowsDone)
            #expect(batches.count >= 40 / 7, "\(batches)")
            #expect(batches == batches.sorted() && batches.last ?? 0 > 0)
            let finished = try #require(phaseEvents.first { $0.kind == .passFinished && $0.pass == batched + 1 })
            #expect(finished.rowsDone == batches.last)
            #expect(events.first?.kind == .stepStarted && events.last?.kind == .stepFinished)
        }
    }

    @Test func anOnlineHeavyweightStepReportsItsInstallBuildAndWriteGuard() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model) { connection in
            var options = ApplyOptions()
            options.online = true
            var events: [ProgressEvent] = []
            _ = try HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection)
                .apply(options: options, onProgress: { events.append($0) })
            let online: [ProgressEvent.Stage] = [.install, .build, .writeGuard, .swap]
            let order = events.filter { online.contains($0.stage) }.map { "\($0.kind.rawValue) \($0.stage.name)" }
            #expect(order == [
                "passStarted install", "passFinished install", "passStarted build", "passFinished build",
                "passStarted writeGuard", "passFinished writeGuard", "passStarted swap", "passFinished swap",
            ])
            let install = try #require(events.firstIndex { $0.stage == .install })
            let prepare = try #require(events.firstIndex { $0.stage == .pass(.prepare) })
            #expect(install < prepare, "the change logs are installed before the first pass")
        }
    }
}
