import Foundation
import ObjectModel
import Planning
import PostgresClient

/// `fleet apply`: the stores of a journaled run, wave by wave, by `jobs` threads of this
/// process (and any other process working the same run), at most `perServerJobs` of them on
/// one server. Each store goes through the single-store path under its own advisory lock
/// (`StoreMigrator.applyUnderLock`): planned under the lock, every check of `apply`, each step
/// in its transaction with its metadata and history.
public final class FleetRun: @unchecked Sendable {
    public let fleet: FleetFile
    public let model: VersionedModel
    public let target: ModelVersion
    public let explicitMappings: [ExplicitMapping]
    public let options: ApplyOptions
    public let run: String
    public let jobs: Int
    /// Names this process in the journal (`host:pid`).
    public let worker: String
    /// Asked before each claim: true stops claiming (SIGINT); running stores finish.
    public var shouldStop: @Sendable () -> Bool = { false }
    /// Told how many stores the run has left to do, once they are recorded.
    public var onStart: @Sendable (Int) -> Void = { _ in }
    /// Told each store's outcome as it is recorded.
    public var onOutcome: @Sendable (FleetOutcome) -> Void = { _ in }

    /// `fleet apply --plan`: each store must find its cohort's saved plan again under its lock.
    public var savedPlan: FleetPlanFile?
    /// Told what a worker waits for when it starts waiting (other workers' claims).
    public var onNotice: @Sendable (String) -> Void = { _ in }

    let connections: ServerConnections
    let lock = NSLock()
    /// Waves whose wait for other workers was reported.
    var reportedWaits: Set<Int> = []
    /// The stores this process's threads hold now.
    var held: Set<FleetStore> = []

    public init(
        fleet: FleetFile, model: VersionedModel, target: ModelVersion, explicitMappings: [ExplicitMapping], options: ApplyOptions,
        run: String, jobs: Int, connect: @escaping @Sendable (String) throws -> PostgresConnection
    ) {
        self.fleet = fleet
        self.model = model
        self.target = target
        self.explicitMappings = explicitMappings
        self.options = options
        self.run = run
        self.jobs = jobs
        self.worker = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
        self.connections = ServerConnections(connect: connect)
    }

    /// `perform()`, then the outcome of every store of the run, from the journal.
    public func execute() throws -> [FleetOutcome] {
        try perform()
        var outcomes: [FleetOutcome] = []
        try forEachOutcome { outcomes.append($0) }
        return outcomes
    }

    /// The outcome of every store of the run, in the run's order, read from the journal in
    /// pages: what a run of any size reports, never held whole.
    public func forEachOutcome(pageSize: Int = 500, _ body: (FleetOutcome) throws -> Void) throws {
        let journal = FleetJournal(connection: try connections.connect(fleet.journalURL), run: run)
        defer { journal.connection.close() }
        try journal.forEachOutcome(pageSize: pageSize, body)
    }

    /// 1. Survey the fleet and record the run (or the stores it lacks) in the journal.
    /// 2. `jobs` threads work the waves in order; a wave ends when no store of it is left
    ///    unfinished by any worker; `stopAfterFailures` failed stores in it skip the later ones.
    public func perform() throws {
        let journal = FleetJournal(connection: try connections.connect(fleet.journalURL), run: run)
        defer { journal.connection.close() }
        try journal.bootstrap()
        try record(in: journal)
        let waves = try journal.waveNames()
        onStart(try journal.unfinishedCount())
        let failure = ResultSlots<Error>(count: 1)
        DispatchQueue.concurrentPerform(iterations: max(1, jobs)) { _ in
            do {
                try work(waves: waves)
            } catch {
                failure.set(0, error)
            }
        }
        connections.closeAll()
        if let error = failure.values[0] ?? nil { throw error }
    }

    /// The survey, and the run's stores recorded in the journal. Of the survey, only what each
    /// store's check under its lock uses is kept, in the store's journal row (`FleetClaim`'s
    /// `surveyed`: under the lock, its fingerprint stands for the drift check's catalog read);
    /// nothing of it stays in memory, which is given back to the system before the stores
    /// migrate.
    private func record(in journal: FleetJournal) throws {
        defer { ServerSurvey.releaseFreedMemory() }
        let states = FleetSurvey.states(of: fleet, model: model, target: target, fingerprints: true) { [connections] server in
            try connections.connect(server.connectionString)
        }
        let assignment = try FleetWaves.assign(states, waves: fleet.waves, file: fleet.path)
        try journal.prepare(
            model: model.name, target: target.name, fleetFile: fleet.path, waves: assignment.names,
            states: states, order: assignment.order
        )
    }

    /// One store through the single-store path, on a connection of its server kept for the
    /// next store; a server that cannot be reached leaves its store `unreached`.
    func migrate(_ claim: FleetClaim) -> FleetOutcome {
        let started = Date()
        let store = claim.store
        guard let server = fleet.server(named: store.server) else {
            return FleetOutcome(store: store, kind: .skipped, from: claim.from, error: "server \(store.server) is no longer in \(fleet.path)")
        }
        if StorePattern.isGlob(store.store) || store.store == "*" {
            return FleetOutcome(store: store, kind: .unreached, error: "server \(server.name) was not reached: its stores are not known")
        }
        let connection: PostgresConnection
        do {
            connection = try connections.take(server)
        } catch {
            return FleetOutcome(store: store, kind: .unreached, from: claim.from, error: FleetSurvey.describe(error, server: server))
        }
        var migrator = StoreMigrator(connection: connection, model: model, store: store.store, targetVersion: target.name, explicitMappings: explicitMappings)
        migrator.contracts = connections.contracts(of: server.name)
        migrator.surveyedCatalog = claim.surveyed
        do {
            let subscribers = server.subscribers(of: store.store)
            if options.expand && !subscribers.isEmpty { throw ExpandWithSubscribers(store: store) }
            let cohortPlan = try savedPlan?.expected(for: store)
            let (report, changed) = subscribers.isEmpty
                ? try migrator.applyUnderLock(options: options, cohortPlan: cohortPlan).changing
                : try applyReplicated(migrator, server: server, subscribers: subscribers, cohortPlan: cohortPlan)
            connections.give(connection, of: server)
            let kind: FleetOutcome.Kind = changed ? .migrated : .upToDate
            return FleetOutcome(
                store: store, kind: kind, from: report.plan.storeVersion ?? claim.from, to: target.name,
                durationMilliseconds: milliseconds(since: started)
            )
        } catch {
            connections.giveIfHealthy(connection, of: server)
            let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: "; ")
            return FleetOutcome(store: store, kind: .failed, from: claim.from, durationMilliseconds: milliseconds(since: started), error: text)
        }
    }
}

/// `fleet apply --expand` of a store the fleet file gives subscribers: its views would serve
/// the old version on the publisher only, and `apply --subscriber` keeps one version. Nothing
/// was changed.
public struct ExpandWithSubscribers: Error, CustomStringConvertible {
    public var store: FleetStore

    public var description: String {
        "store \(store) has subscribers in the fleet file: --expand migrates one server's store and keeps the old version live there only; "
            + "nothing was changed (run fleet apply without --expand for it)"
    }
}

extension ApplyReport {
    /// The report, and whether it changed the store.
    var changing: (report: ApplyReport, changed: Bool) { (self, !appliedSteps.isEmpty) }
}
