import Foundation
import Planning
import PostgresClient

/// Consecutive set-based stage 1 passes of a heavyweight step run at once, on up to `jobs`
/// sessions of their own (`apply --jobs`). Each pass still commits alone with its checkpoint,
/// so a crash leaves some passes done and others not, and the next `apply` runs those not
/// done. A pass starts once the passes it waits for (`PlannedPass.waitsFor`) have committed.
/// A pass with a split form runs its INSERT in parts, each a piece of work for any session
/// (`parts(of:in:)`, ConcurrentPasses+Split.swift); the session ending its last part finishes it (primary key,
/// checkpoint). The first failure stops the others from starting; work already running
/// finishes or fails.
final class ConcurrentPasses: @unchecked Sendable {
    /// A pass, or part `part` of `parts` of a split pass's INSERT.
    private struct Work {
        var number: Int
        var pass: PlannedPass
        var part = 0
        var parts = 1
    }

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
    private var waiting: [Work]
    private var running = 0
    private var committed: Set<String>
    private var failure: Error?
    private var last: Checkpoint?
    private var rows = 0
    /// Split passes begun: their progress event, parts left and rows the parts added.
    private var begun: [Int: (event: ProgressEvent, started: Date, partsLeft: Int, rows: Int)] = [:]
    /// An earlier run made the staging tables (its passes are done): its parts may have left
    /// rows in a split pass's table, emptied first. A run that made them finds them empty.
    private let resumes: Bool
    /// Split passes' source tables' sizes in blocks, read before the sessions start.
    private var blocks: [Int: Int64] = [:]

    /// The passes `numbers` (1-based, a group `HeavyweightPhase.planned` laid out) not in `done`;
    /// `stagingLogged`: the staging schema logs other sessions' writes (a split pass needs it).
    init(
        run: HeavyweightRun, numbers: [Int], done: [Int: Checkpoint], jobs: Int, after last: Checkpoint?, writeGuard: WriteGuard? = nil,
        opening: SessionsOpening? = nil, stagingLogged: Bool = false
    ) {
        self.run = run
        self.opening = opening
        self.writeGuard = writeGuard
        self.jobs = jobs
        self.last = last
        let all = numbers.map { (number: $0, pass: run.work.passes[$0 - 1]) }
        mappings = Set(all.compactMap(\.pass.entityMapping))
        passes = all.filter { done[$0.number] == nil }
        let work = passes.flatMap { number, pass in
            let parts = Self.parts(of: pass, in: run, jobs: jobs, guarded: writeGuard != nil, stagingLogged: stagingLogged)
            return (0..<parts).map { Work(number: number, pass: pass, part: $0, parts: parts) }
        }
        // The parts of a split pass first (the big copies: every session starts on one, the
        // small passes fill in after), the rest in the plan's order.
        waiting = work.filter { $0.parts > 1 } + work.filter { $0.parts == 1 }
        committed = Set(all.filter { done[$0.number] != nil }.compactMap(\.pass.entityMapping))
        resumes = !done.isEmpty
    }

    /// Whether `numbers` run here rather than one by one: more than one pass, or one in parts.
    static func runsTogether(_ numbers: [Int], passes: [PlannedPass], jobs: Int, parts: (PlannedPass) -> Int) -> Bool {
        jobs > 1 && (numbers.count > 1 || numbers.contains { parts(passes[$0 - 1]) > 1 })
    }

    /// The sessions the first passes run at once will use (`jobs` > 1): one per piece of work
    /// (a pass, or a part of one, `parts`) of the first group of the step's phases not done that
    /// runs here, at most `jobs`; 0 when none does.
    static func sessions(in phases: [HeavyweightPhase], passes: [PlannedPass], jobs: Int, parts: (PlannedPass) -> Int) -> Int {
        let first = phases.compactMap { phase -> Int? in
            guard case .passes(let numbers) = phase.kind, !phase.isDone else { return nil }
            let work = numbers.reduce(0) { $0 + parts(passes[$1 - 1]) }
            return work > 1 ? work : nil
        }.first
        guard jobs > 1, let first else { return 0 }
        return min(jobs, first)
    }

    /// Runs the passes; returns the checkpoint they leave (the one before, followed by each) and
    /// the rows they made. Rethrows the first failure once every session has stopped.
    func execute() throws -> (last: Checkpoint?, rows: Int) {
        defer { sessions.forEach { $0.close() } }
        for _ in 0..<min(jobs, waiting.count) { sessions.append(try opening?.take() ?? run.connection.reconnect()) }
        let split = Set(waiting.filter { $0.parts > 1 }.map(\.number))
        if !split.isEmpty {
            let passes = passes.filter { split.contains($0.number) }
            if resumes { try Self.clearSplitTables(of: passes.map(\.pass), in: run, on: sessions[0]) }
            for (number, pass) in passes { blocks[number] = try Self.blocks(read: pass, on: sessions[0]) }
        }
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

    /// Takes the next work whose waits have committed, until none is left or one failed.
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
            let work = waiting.remove(at: next)
            running += 1
            if work.parts > 1 {
                runPart(work, on: session)
            } else {
                var event = run.progress(.passStarted, pass: work.number, of: work.pass)
                run.onProgress(event)
                let previous = last
                condition.unlock()
                let started = Date()
                let outcome = Result { try run.runSetBased(work.pass, number: work.number, after: previous, on: session, writeGuard: writeGuard) }
                condition.lock()
                finished(work.pass, outcome, event: &event, started: started)
            }
            running -= 1
            condition.broadcast()
        }
        condition.broadcast()
    }

    /// A part of a split pass (called and returning with `condition` locked); the last part
    /// to end finishes the pass.
    private func runPart(_ work: Work, on session: PostgresConnection) {
        if begun[work.number] == nil {
            let event = run.progress(.passStarted, pass: work.number, of: work.pass)
            run.onProgress(event)
            begun[work.number] = (event, Date(), work.parts, 0)
        }
        condition.unlock()
        let blocks = self.blocks[work.number] ?? 0
        let outcome = Result { try Self.runPart(work.pass, work.part, of: work.parts, blocks: blocks, in: run, on: session) }
        condition.lock()
        switch outcome {
        case .success(let added):
            begun[work.number]!.rows += added
            begun[work.number]!.partsLeft -= 1
        case .failure(let error):
            if failure == nil { failure = error }
        }
        guard failure == nil, let pass = begun[work.number], pass.partsLeft == 0 else { return }
        let previous = last
        condition.unlock()
        let finish = Result {
            try run.options.afterParts?(work.number)
            // The rest of the pass once every part committed: its primary key and its checkpoint.
            return try run.runSetBased(work.pass, number: work.number, after: previous, on: session, writeGuard: writeGuard, insertedByParts: pass.rows)
        }
        condition.lock()
        var event = pass.event
        finished(work.pass, finish, event: &event, started: pass.started)
    }

    /// A pass's outcome (with `condition` locked): its checkpoint folded into the last one.
    private func finished(_ pass: PlannedPass, _ outcome: Result<Checkpoint, Error>, event: inout ProgressEvent, started: Date) {
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
    }
}
