import Foundation
import Testing
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21, one engine: a heavyweight step runs exactly the phases Planning laid out
/// (`StagedWork.phases`), in their order and groups; a resumed one, those not done.
@Suite(integration) struct HeavyweightPhaseOrderTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    /// Applies the kitchen's mapping with `options`, recording the phases that run; returns
    /// them with the phases the plan under the lock laid out.
    static func apply(_ options: ApplyOptions, on connection: PostgresConnection) throws -> (planned: [HeavyweightPhase], run: [HeavyweightPhase.Kind]) {
        var options = options
        let recorded = HeavyweightPhasesRun()
        options.phasesRun = recorded
        let report = try Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection).apply(options: options)
        return (try #require(report.plan.steps.first?.staged).phases, recorded.kinds)
    }

    @Test("an offline heavyweight apply runs the planned phases in order: install, write guard, the passes (stage 1's at once), the swap")
    func offlineRunsThePlannedPhases() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var options = ApplyOptions()
            options.jobs = 2
            let (planned, run) = try Self.apply(options, on: connection)
            #expect(planned.map(\.kind) == [.install, .writeGuard, .passes([1]), .passes([2, 3]), .passes([4]), .swap])
            #expect(run == planned.map(\.kind))
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 300)
        }
    }

    @Test("an online heavyweight apply runs the planned phases in order, with no wait for the proceed planned unless postponed")
    func onlineRunsThePlannedPhases() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var options = ApplyOptions()
            options.online = true
            options.jobs = 2
            let (planned, run) = try Self.apply(options, on: connection)
            #expect(planned.map(\.kind) == [
                .install, .passes([1]), .passes([2, 3]), .catchUpRounds(afterBuild: false), .stageThreeBuild,
                .catchUpRounds(afterBuild: true), .writeGuard, .guardedSwap(validate: 4),
            ])
            #expect(run == planned.map(\.kind))
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 300)
        }
    }

    @Test("a postponed online heavyweight apply plans the wait for the proceed before the write guard, shows it, and runs it")
    func aPostponedOnlineRunPlansShowsAndRunsTheWait() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let migrator = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection)
            let shown = try #require(try migrator.plan(mode: .online, postponesSwitchOver: true).steps.first?.staged).shownPhases.map(\.summary)
            #expect(shown.contains("wait for orchestrator control proceed --store shop (--postpone-switch-over), catch-up rounds going on meanwhile"), "\(shown)")
            #expect(shown.last?.hasPrefix("write guard on ") == true && shown.dropLast().last?.hasPrefix("wait for orchestrator control proceed") == true, "\(shown)")
            #expect(try #require(try migrator.plan(mode: .online).steps.first?.staged).shownPhases.count == shown.count - 1)

            var options = PostponedSwitchOverTests.options(timeoutSeconds: 30)
            options.online = true
            options.betweenBatches = [PostponedSwitchOverTests.ProceedDuringTheWork()]
            let (planned, run) = try Self.apply(options, on: connection)
            #expect(planned.map(\.kind).suffix(4) == [.catchUpRounds(afterBuild: true), .waitToSwitchOver, .writeGuard, .guardedSwap(validate: 4)])
            #expect(run == planned.map(\.kind))
            #expect(try S.version(on: connection) == "Kitchen 2")
        }
    }

    /// Stops the run the first time it is asked: after the first pass committed.
    struct StopAtOnce: BetweenBatches {
        func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
            .stop(reason: "stopped by the test")
        }
    }

    @Test("a resumed offline run runs exactly the planned phases but those the interrupted run did")
    func aResumedOfflineRunSkipsOnlyTheDonePhases() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var stopping = ApplyOptions()
            stopping.betweenBatches = [StopAtOnce()]
            #expect(throws: (any Error).self) { try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: stopping) }
            #expect(try S.version(on: connection) == "Kitchen 1")

            var options = ApplyOptions()
            options.jobs = 2
            let (planned, run) = try Self.apply(options, on: connection)
            #expect(planned.filter(\.isDone).map(\.kind) == [.install, .passes([1])])
            #expect(run == planned.filter { !$0.isDone }.map(\.kind))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 300)
        }
    }

    @Test("a resumed online run runs exactly the planned phases but the passes the crashed run committed")
    func aResumedOnlineRunSkipsOnlyTheDonePasses() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try OnlineHeavyweightTests.crashOnlineRun(model, on: connection)
            var options = ApplyOptions()
            options.online = true
            let (planned, run) = try Self.apply(options, on: connection)
            let done = planned.filter(\.isDone).map(\.kind)
            #expect(done.first == .install && done.contains(.passes([1])))
            #expect(run == planned.filter { !$0.isDone }.map(\.kind))
            #expect(try S.version(on: connection) == "Kitchen 2")
        }
    }
}
