/// A phase of an online heavyweight step as `plan --online` shows it.
public struct HeavyweightOnlinePhase: Sendable, Hashable {
    public var summary: String
    /// The strongest lock it takes on a table of the old store.
    public var lock: LockLevel
    /// How long it holds that lock, in `OnlinePhase`'s terms.
    public var hold: OnlinePhase.Hold
    /// The same, said for `plan --online`.
    public var holdText: String
    /// Writes to the old store wait while it runs.
    public var blocksWrites: Bool
}

extension OnlineCatchUp {
    /// The phases of `step` run online, in order, as `plan --online` shows them
    /// (docs/online-migrations.md, heavyweight steps): the lines of `HeavyweightPhase.planned`.
    public static func phases(of step: PlannedStep, store: String) -> [HeavyweightOnlinePhase] {
        HeavyweightPhase.planned(step, online: true, store: store).flatMap(\.shown)
    }

    static func installShown(_ step: PlannedStep, store: String) -> HeavyweightOnlinePhase {
        let joins = step.staged?.catchUp?.loggedJoinTables ?? []
        let logged = joins.isEmpty ? "" : " (a link of \(joins.map { "\(store).\($0)" }.joined(separator: ", ")) logs the keys of the two rows it joins)"
        let pointers = step.staged?.catchUp?.loggedPointers ?? []
        let pointed = pointers.isEmpty ? "" : " (a change or delete of \(pointers.map { "\(store).\($0)" }.joined(separator: ", ")) logs the key it pointed at)"
        return HeavyweightOnlinePhase(
            summary: "install the change logs and the row triggers on \(trackedTables(step, store: store))\(logged)\(pointed); a TRUNCATE logs the keys of the rows it removes", lock: .shareRowExclusive, hold: .instant,
            holdText: "a catalog change per table (milliseconds; waits at most --lock-timeout, then retried)", blocksWrites: false
        )
    }

    static func passShown(_ pass: PlannedPass, store: String) -> HeavyweightOnlinePhase {
        let reads = pass.sourceTable.map { "reads \(store).\($0)" } ?? "builds in the staging schema"
        return HeavyweightOnlinePhase(
            summary: pass.name + " (\(pass.execution.rawValue))", lock: .accessShare, hold: .scan,
            holdText: "\(reads) in its own transaction; reads and writes go on", blocksWrites: false
        )
    }

    static func roundsShown(_ step: PlannedStep) -> HeavyweightOnlinePhase {
        HeavyweightOnlinePhase(
            summary: "catch-up rounds: the rows written meanwhile mapped again\(step.staged?.catchUp.map(Self.remapped) ?? ""), until at most 1000 writes are left (at most 8 rounds)",
            lock: .accessShare, hold: .scan, holdText: "one transaction per round, as long as its rows take; reads and writes go on", blocksWrites: false
        )
    }

    static let buildShown = HeavyweightOnlinePhase(
        summary: "stage 3's build: NOT NULLs and checks of to-one columns, foreign keys, unique constraints, indexes and to-many counts of the new tables, then catch-up rounds again",
        lock: .accessShare, hold: .scan,
        holdText: "builds in the staging schema, then one transaction per round; reads and writes go on", blocksWrites: false
    )

    /// `--postpone-switch-over`'s wait, which the rounds go on through.
    /// The wait before the write guard: for the proceed (`--postpone-switch-over`), or for
    /// `complete` (`apply --expand`, the new version read-only in its views meanwhile, or
    /// written through a reverse mapping model).
    static func waitShown(_ step: PlannedStep, store: String) -> HeavyweightOnlinePhase {
        let waitsFor = step.staged?.newVersionViews.map {
            "orchestrator complete --store \(store) (apply --expand; '\($0.version)' served \($0.isReadOnly ? "read-only" : "written through \($0.writes?.file ?? "")") in \"\($0.schema)\" meanwhile)"
        } ?? "orchestrator control proceed --store \(store) (--postpone-switch-over)"
        return HeavyweightOnlinePhase(
            summary: "wait for \(waitsFor), catch-up rounds going on meanwhile",
            lock: .accessShare, hold: .scan,
            holdText: "one transaction per round, at most --postpone-timeout in all, then the run stops and apply again continues; reads and writes go on", blocksWrites: false
        )
    }

    static func guardShown(_ step: PlannedStep, store: String) -> HeavyweightOnlinePhase {
        let whole = step.staged?.catchUp.map { rerunWhole($0, step: step, store: store) } ?? (summary: "", hold: "")
        return HeavyweightOnlinePhase(
            summary: "write guard on \(trackedTables(step, store: store)), then the last catch-up round\(whole.summary), the rest of stage 3 (required links, foreign keys and to-many counts of the rows written after the build) and the swap, in one transaction",
            lock: .share, hold: .scan,
            holdText: "the last round (at most about 1000 rows) and the checks of the rows written after the build, through the indexes\(whole.hold); writes wait, reads go on",
            blocksWrites: true
        )
    }

    /// The old store's tables the change tracking covers, qualified.
    private static func trackedTables(_ step: PlannedStep, store: String) -> String {
        (step.staged?.changeTracking.sourceTables ?? []).map { "\(store).\($0)" }.joined(separator: ", ")
    }
}

extension OnlineCatchUp {
    /// What a round runs again beyond stage 1 and 2's statements, for `plan --online`: the
    /// policies' per-instance hooks, the pairs of join tables.
    static func remapped(_ catchUp: OnlineCatchUp) -> String {
        var parts = catchUp.round.compactMap { part -> String? in
            guard case .stream(let stream) = part, let policy = stream.policy else { return nil }
            return "\(stream.entityMapping) through policy '\(policy)': its per-instance hooks for those rows, the instances it inserted for them replaced"
        }
        parts += catchUp.rerunWhole.map { "\($0) left as the bulk pass made it, its links cleared where they may point at rows gone, until the write guard" }
        if !catchUp.relinkedJoinTables.isEmpty {
            parts.append("their links in \(catchUp.relinkedJoinTables.joined(separator: ", ")) made again")
        }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }
}

extension OnlineCatchUp {
    /// What the last round adds under the write guard for the entity mappings run again whole
    /// (`WholeMappingRerun`): the summary's words and the hold's, with the rows each reads.
    static func rerunWhole(_ catchUp: OnlineCatchUp, step: PlannedStep, store: String) -> (summary: String, hold: String) {
        guard !catchUp.rerunWhole.isEmpty else { return ("", "") }
        let policies = Dictionary(catchUp.guardedRound.compactMap { part -> (String, String)? in
            guard case .stream(let stream) = part, let policy = stream.policy else { return nil }
            return (stream.entityMapping, policy)
        }) { first, _ in first }
        let mappings = catchUp.rerunWhole.map { name in "\(name) through policy '\(policies[name] ?? "")'" }.joined(separator: ", ")
        let rows = catchUp.rerunWhole.compactMap { name -> String? in
            guard let pass = step.passes.first(where: { $0.stage == .createInstances && $0.entityMapping == name }), let table = pass.sourceTable else { return nil }
            return pass.rowEstimate > 0 ? "about \(pass.rowEstimate) rows of \(store).\(table)" : "the rows of \(store).\(table)"
        }.joined(separator: ", ")
        return (
            " with \(mappings) run again whole (its hooks over the whole entity mapping see the final data once, as offline)",
            ", plus every row \(catchUp.rerunWhole.joined(separator: ", ")) maps (\(rows)) and the rows reading them through a to-one, mapped again through the policy: this grows with those rows"
        )
    }
}
