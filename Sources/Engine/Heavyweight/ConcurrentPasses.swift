import Foundation
import Planning
import PostgresClient

/// Consecutive set-based stage 1 passes of a heavyweight step run at once, on up to `jobs`
/// sessions of their own (`apply --jobs`). Each pass still commits alone with its checkpoint,
/// so a crash leaves some passes done and others not, and the next `apply` runs those not
/// done. A pass starts once the passes it waits for (`PlannedPass.waitsFor`) have committed.
/// The first failure stops the others from starting; passes already running finish or fail.
final class ConcurrentPasses: @unchecked Sendable {
    private let run: HeavyweightRun
    private let passes: [(number: Int, pass: PlannedPass)]
    /// Entity mappings of the passes run here: their waits on other entity mappings were met
    /// before the first of them.
    private let mappings: Set<String>
    private let jobs: Int
    /// Offline, the session keeping writes out of the old store: each pass checks before it
    /// commits that no write was logged since it was taken.
    private let writeGuard: WriteGuard?
    private var sessions: [PostgresConnection] = []
    /// Where sessions opened beforehand are taken from, before opening more.
    private let opening: SessionsOpening?
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting: [(number: Int, pass: PlannedPass)]
    private var running = 0
    private var committed: Set<String>
    private var failure: Error?
    private var last: Checkpoint?
    private var rows = 0

    /// The passes `numbers` (1-based, a group `HeavyweightPhase.planned` laid out) not in `done`.
    init(
        run: HeavyweightRun, numbers: [Int], done: [Int: Checkpoint], jobs: Int, after last: Checkpoint?, writeGuard: WriteGuard? = nil,
        opening: SessionsOpening? = nil
    ) {
        self.run = run
        self.opening = opening
        self.writeGuard = writeGuard
        self.jobs = jobs
        self.last = last
        let all = numbers.map { (number: $0, pass: run.work.passes[$0 - 1]) }
        mappings = Set(all.compactMap(\.pass.entityMapping))
        passes = all.filter { done[$0.number] == nil }
        waiting = passes
        committed = Set(all.filter { done[$0.number] != nil }.compactMap(\.pass.entityMapping))
    }

    /// The sessions the first passes run at once will use (`jobs` > 1): one per pass of the
    /// first group of the step's phases not done, at most `jobs`; 0 when no passes run at once.
    static func sessions(in phases: [HeavyweightPhase], jobs: Int) -> Int {
        let first = phases.lazy.compactMap { phase -> [Int]? in
            guard case .passes(let numbers) = phase.kind, !phase.isDone, numbers.count > 1 else { return nil }
            return numbers
        }.first
        guard jobs > 1, let first else { return 0 }
        return min(jobs, first.count)
    }

    /// Runs the passes; returns the checkpoint they leave (the one before, followed by each) and
    /// the rows they made. Rethrows the first failure once every session has stopped.
    func execute() throws -> (last: Checkpoint?, rows: Int) {
        defer { sessions.forEach { $0.close() } }
        for _ in 0..<min(jobs, passes.count) { sessions.append(try opening?.take() ?? run.connection.reconnect()) }
        // Not threads of our own: a thread's block outlives the work it does, and with it the
        // run's progress closure, which `apply` lends only for the step (`withoutActuallyEscaping`
        // traps when it escapes). `concurrentPerform` returns when every session has stopped.
        let sessions = self.sessions
        DispatchQueue.concurrentPerform(iterations: sessions.count) { index in
            work(on: sessions[index])
        }
        if let failure { throw failure }
        return (last, rows)
    }

    /// Takes the next pass whose waits have committed, until none is left or one failed.
    private func work(on session: PostgresConnection) {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil, !waiting.isEmpty {
            guard let next = waiting.firstIndex(where: { mappings.intersection($0.pass.waitsFor).isSubset(of: committed) }) else {
                // Every pass left waits for one that is running (a pass waits only for earlier ones).
                precondition(running > 0, "heavyweight passes waiting for none running: \(waiting.map(\.pass.name))")
                condition.wait()
                continue
            }
            let (number, pass) = waiting.remove(at: next)
            running += 1
            let previous = last
            var event = run.progress(.passStarted, pass: number, of: pass)
            run.onProgress(event)
            condition.unlock()
            let started = Date()
            let outcome = Result { try run.runSetBased(pass, number: number, after: previous, on: session, writeGuard: writeGuard) }
            condition.lock()
            running -= 1
            switch outcome {
            case .success(let checkpoint):
                last = last.map { $0.followed(by: checkpoint, recounted: pass.tablesWritten) } ?? checkpoint
                rows += checkpoint.rows
                if let name = pass.entityMapping { committed.insert(name) }
                event.kind = .passFinished
                event.rowsDone = checkpoint.rows
                event.elapsedSeconds = Date().timeIntervalSince(started)
                run.onProgress(event)
            case .failure(let error):
                if failure == nil { failure = error }
            }
            condition.broadcast()
        }
        condition.broadcast()
    }
}
