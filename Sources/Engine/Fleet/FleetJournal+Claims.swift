import Foundation
import PostgresClient
import SQLBuilding

/// How one store of a fleet run ended; the raw values are a public contract.
public struct FleetOutcome: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case migrated, upToDate, failed, unreached, skipped
    }

    public var store: FleetStore
    public var kind: Kind
    public var from: String?
    public var to: String?
    public var durationMilliseconds: Int?
    public var error: String?

    public init(store: FleetStore, kind: Kind, from: String? = nil, to: String? = nil, durationMilliseconds: Int? = nil, error: String? = nil) {
        self.store = store
        self.kind = kind
        self.from = from
        self.to = to
        self.durationMilliseconds = durationMilliseconds
        self.error = error
    }

    /// The store is at the target.
    public var isDone: Bool { kind == .migrated || kind == .upToDate }
}

/// A store a worker holds: its row stays locked until the outcome is committed.
struct FleetClaim {
    var store: FleetStore
    var from: String?
    /// What the run's survey found of the store (`SurveyedCatalog`), kept in the journal.
    var surveyed: SurveyedCatalog?
}

extension FleetJournal {
    /// Claims the next store of `wave` no worker holds, on a server fewer than `perServer`
    /// claims of any worker hold, in a transaction left open: the claim lasts until `finish`
    /// commits the outcome, or the session ends. Nil (and no transaction) when none is left
    /// to claim now.
    ///
    /// A claim takes one of its server's `perServer` slots: transaction-level advisory locks
    /// of the journal, so the bound holds over every worker of the run, and a slot is free
    /// again when its claim's transaction ends, however it ends.
    ///
    /// Claimers of a run take turns (a session-level advisory lock held only while claiming,
    /// waited for at most `claimTurnWait` seconds): a claimer locks a store's row before it
    /// finds the server's slots full, and without turns another worker, freeing that server's
    /// slot at that moment, would skip the row and take a later store of the server first.
    /// With turns, each server's stores are claimed in their order.
    func claim(wave: Int, perServer: Int) throws -> FleetClaim? {
        var full: [String] = []
        let turn = PostgresConnection.advisoryLockKey(for: "orchestrator:fleet-claims:\(run)")
        var holdsTurn = false
        defer { if holdsTurn { _ = try? connection.execute("SELECT pg_advisory_unlock(\(String(turn)))") } }
        while true {
            do {
                // BEGIN, the turn (the first time) and the claim in one round trip: literals, no
                // binds, so one PQexec. The turn is a session lock: a ROLLBACK keeps it.
                let takeTurn = holdsTurn ? "" : "SET LOCAL lock_timeout = '\(Self.claimTurnWait)s'; SELECT pg_advisory_lock(\(turn));"
                holdsTurn = true // unlocking a lock not taken (the statement failed first) only warns
                let row = try connection.execute("""
                    BEGIN;
                    \(unsafeRaw: takeTurn)
                    SELECT server, store, from_version, surveyed FROM \(ident: Self.schema, "stores")
                    WHERE run = \(literal: run) AND wave = \(literal: wave) AND outcome IS NULL
                      AND server <> ALL(\(literal: CatalogReader.arrayLiteral(full))::text[])
                    ORDER BY position LIMIT 1 FOR UPDATE SKIP LOCKED
                    """)
                guard !row.isEmpty, let server = row.value(0, "server"), let store = row.value(0, "store") else {
                    try connection.execute("COMMIT")
                    return nil
                }
                if try takeSlot(of: server, slots: perServer) {
                    return FleetClaim(
                        store: FleetStore(server: server, store: store), from: row.value(0, "from_version"),
                        surveyed: SurveyedCatalog(journalText: row.value(0, "surveyed"))
                    )
                }
                try connection.execute("ROLLBACK")
                full.append(server)
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// How long a worker waits for its turn to claim (others' claims take milliseconds).
    static let claimTurnWait = 60

    /// One of `server`'s claim slots for this transaction; false when every one is taken. The
    /// slots are tried in order, in one statement: the scan stops at the first one taken (no
    /// ORDER BY, which would try them all).
    private func takeSlot(of server: String, slots: Int) throws -> Bool {
        let keys = (0..<max(1, slots)).map { String(PostgresConnection.advisoryLockKey(for: "orchestrator:fleet-slot:\(run):\(server):\($0)")) }
        return !(try connection.execute("""
            SELECT k FROM unnest(\("{" + keys.joined(separator: ",") + "}")::bigint[]) WITH ORDINALITY AS s(k, i)
            WHERE pg_try_advisory_xact_lock(k) LIMIT 1
            """)).isEmpty
    }

    /// Records the claimed store's outcome and ends the claim.
    func finish(_ outcome: FleetOutcome, worker: String) throws {
        do {
            try connection.execute("\(recording(outcome, worker: worker)); COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The UPDATE that records `outcome`, with literals (no binds): `finish` sends it with the
    /// COMMIT in one round trip; when it fails, the COMMIT is not run and the claim rolls back.
    func recording(_ outcome: FleetOutcome, worker: String) -> SQL {
        func text(_ value: String?) -> String { value.map(quoteLiteral) ?? "NULL" }
        return """
            UPDATE \(ident: Self.schema, "stores")
            SET outcome = \(literal: outcome.kind.rawValue), from_version = coalesce(\(unsafeRaw: text(outcome.from)), from_version),
                to_version = \(unsafeRaw: text(outcome.to)), worker = \(literal: worker), attempts = attempts + 1, finished_at = now(),
                duration_ms = \(unsafeRaw: outcome.durationMilliseconds.map { String($0) } ?? "NULL"), error = \(unsafeRaw: text(outcome.error))
            WHERE run = \(literal: run) AND server = \(literal: outcome.store.server) AND store = \(literal: outcome.store.store)
            """
    }

    /// Stores of `wave` (of every wave: nil) not finished: unclaimed, or held by a worker now.
    func unfinishedCount(wave: Int? = nil) throws -> Int {
        Int(try connection.execute("""
            SELECT count(*) AS n FROM \(ident: Self.schema, "stores")
            WHERE run = \(run) AND (wave = \(wave.map(Int64.init).map(SQLValue.int) ?? .null) OR \(wave == nil)) AND outcome IS NULL
            """).int(0, "n") ?? 0)
    }

    /// How many stores of `wave` are not finished (held by workers now, or unclaimed), and the
    /// first `naming` of them in their order.
    func unfinishedStores(wave: Int, naming: Int = 20) throws -> (count: Int, first: [FleetStore]) {
        let result = try connection.execute("""
            SELECT server, store, count(*) OVER () AS n FROM \(ident: Self.schema, "stores")
            WHERE run = \(run) AND wave = \(wave) AND outcome IS NULL ORDER BY position LIMIT \(Int64(naming))
            """)
        let first = result.rows.indices.map { FleetStore(server: result.value($0, "server") ?? "", store: result.value($0, "store") ?? "") }
        return (result.rows.isEmpty ? 0 : Int(result.int(0, "n") ?? 0), first)
    }

    /// The server ends this session when it idles in a transaction (a claim) for `seconds`.
    func endIdleClaims(afterSeconds seconds: Int) throws {
        try connection.execute("SELECT set_config('idle_in_transaction_session_timeout', \(String(seconds * 1000)), false)")
    }

    func failureCount(wave: Int) throws -> Int {
        Int(try connection.execute("""
            SELECT count(*) AS n FROM \(ident: Self.schema, "stores") WHERE run = \(run) AND wave = \(wave) AND outcome = 'failed'
            """).int(0, "n") ?? 0)
    }

    /// Marks the unclaimed stores of the waves after `wave` `skipped`.
    func skipWaves(after wave: Int, reason: String) throws {
        try connection.execute("""
            UPDATE \(ident: Self.schema, "stores") SET outcome = 'skipped', error = \(reason)
            WHERE (run, server, store) IN (
                SELECT run, server, store FROM \(ident: Self.schema, "stores")
                WHERE run = \(run) AND wave > \(wave) AND outcome IS NULL FOR UPDATE SKIP LOCKED)
            """)
    }

    /// The run's waves by position.
    func waveNames() throws -> [String] {
        let result = try connection.execute("SELECT name FROM \(ident: Self.schema, "waves") WHERE run = \(run) ORDER BY position")
        return result.rows.indices.compactMap { result.value($0, "name") }
    }

    /// Every store of the run in its order, `pageSize` rows at a time (keyset pages on
    /// position, server and store: a run of any size is read in pages, never held whole, and
    /// two rows sharing a position are never skipped at a page's edge); one not finished is
    /// `unreached`.
    func forEachOutcome(pageSize: Int = 500, _ body: (FleetOutcome) throws -> Void) throws {
        var after: (position: Int64, server: String, store: String) = (-1, "", "")
        while true {
            let result = try connection.execute("""
                SELECT position, server, store, outcome, from_version, to_version, duration_ms, error FROM \(ident: Self.schema, "stores")
                WHERE run = \(run) AND (position, server, store) > (\(after.position), \(after.server), \(after.store))
                ORDER BY position, server, store LIMIT \(Int64(pageSize))
                """)
            for row in result.rows.indices {
                try body(FleetOutcome(
                    store: FleetStore(server: result.value(row, "server") ?? "", store: result.value(row, "store") ?? ""),
                    kind: result.value(row, "outcome").flatMap(FleetOutcome.Kind.init(rawValue:)) ?? .unreached,
                    from: result.value(row, "from_version"), to: result.value(row, "to_version"),
                    durationMilliseconds: result.int(row, "duration_ms").map(Int.init),
                    error: result.value(row, "error") ?? (result.value(row, "outcome") == nil ? "not reached (the run was stopped)" : nil)
                ))
            }
            let last = result.rows.count - 1
            guard result.rows.count == pageSize, let position = result.int(last, "position"),
                  let server = result.value(last, "server"), let store = result.value(last, "store")
            else { return }
            after = (position, server, store)
        }
    }
}
