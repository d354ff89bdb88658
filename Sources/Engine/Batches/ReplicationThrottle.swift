import Foundation
import PostgresClient
import SQLBuilding

/// `apply --max-replica-lag`, `--max-slot-lag`, `--throttle-timeout` (docs/replication.md,
/// "Throttling"): between batches, the run waits while a physical standby's replay or a
/// logical slot is too far behind, and stops (resumably) once it has waited longer than the
/// timeout. One query a batch, on the primary's catalog views: with no standby and no slot it
/// reads two empty views.
public final class ReplicationThrottle: BetweenBatches, @unchecked Sendable {
    public var maxReplicaLagSeconds: Double?
    public var maxSlotLagBytes: Int64?
    /// `--slot`: the logical slots `maxSlotLagBytes` watches; empty: every logical slot.
    public var slots: [String] = []
    public var timeoutSeconds: Double

    public static let defaultMaxReplicaLagSeconds = 10.0
    public static let defaultTimeoutSeconds = 600.0
    /// How its reasons begin: `status` tells a throttled run from a paused one by it.
    public static let reasonPrefix = "throttled:"

    private let lock = NSLock()
    /// Since when the run has been over a limit without a break.
    private var overSince: Date?
    /// Per standby: the replay position last seen, and since when it has not moved.
    private var replaySeen: [String: (lsn: String, since: Date)] = [:]

    public init(maxReplicaLagSeconds: Double? = defaultMaxReplicaLagSeconds, maxSlotLagBytes: Int64? = nil, timeoutSeconds: Double = defaultTimeoutSeconds) {
        self.maxReplicaLagSeconds = maxReplicaLagSeconds
        self.maxSlotLagBytes = maxSlotLagBytes
        self.timeoutSeconds = timeoutSeconds
    }

    public func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
        guard maxReplicaLagSeconds != nil || maxSlotLagBytes != nil else { return .proceed }
        let reason = try overLimit(on: connection)
        return lock.withLock {
            guard let reason else {
                overSince = nil
                return .proceed
            }
            let since = overSince ?? Date()
            overSince = since
            if Date().timeIntervalSince(since) > timeoutSeconds {
                return .stop(reason: "throttled: \(reason), for longer than --throttle-timeout (\(DurationText.text(seconds: timeoutSeconds)))")
            }
            return .pause(reason: "throttled: \(reason)")
        }
    }

    /// Each of `slots` must be a logical slot of the store's database (the one `connection`
    /// is on): a slot that is not the store's is a mistake to stop on before anything changes,
    /// never a limit that holds nothing back.
    public func requireSlots(on connection: PostgresConnection) throws {
        guard !slots.isEmpty else { return }
        let result = try connection.execute("""
            SELECT slot_name::text AS name, slot_type AS kind, coalesce(database::text, '') AS database, current_database()::text AS here
            FROM pg_replication_slots ORDER BY slot_name
            """)
        let here = result.rows.isEmpty ? "" : result.value(0, "here") ?? ""
        let logical = result.rows.indices.filter { result.value($0, "kind") == "logical" && result.value($0, "database") == here }
            .compactMap { result.value($0, "name") }
        for slot in slots where !logical.contains(slot) {
            let row = result.rows.indices.first { result.value($0, "name") == slot }
            let what = row.map { result.value($0, "kind") == "physical" ? "a physical slot (--max-replica-lag watches standbys)" : "a slot of database \(result.value($0, "database") ?? "?")" }
            throw SlotNotTheStores(slot: slot, what: what ?? "no replication slot of this server", slots: logical)
        }
    }

    /// Whether a standby `lag` seconds behind holds the next batch back: over half the limit.
    /// A batch started just under the limit adds its own replay to the lag (by 0.08 s over a
    /// 0.2 s limit, measured on a standby held to 0.2 CPU, docs/replication-reference.md); started
    /// under half, the lag stays under the limit as long as one batch replays in less than half
    /// of it (batches are sized to `--batch-time`, 20 ms on the primary by default).
    static func holdsBack(lag: Double, limit: Double) -> Bool {
        lag > limit / 2
    }

    /// Why the run must wait now, or nil. A standby counts when its `replay_lag` is over the
    /// limit, or when its replay has stood still for longer than the limit while WAL was sent
    /// to it (`replay_lag` only grows while the standby answers).
    func overLimit(on connection: PostgresConnection) throws -> String? {
        let chosen: SQL = slots.isEmpty ? "" : "AND slot_name::text IN (\(literals: slots))"
        let result = try connection.execute("""
            SELECT 'standby' AS kind, coalesce(nullif(application_name, ''), client_addr::text, pid::text) AS name,
                   extract(epoch FROM replay_lag)::float8 AS lag, replay_lsn::text AS replay,
                   (sent_lsn > replay_lsn) AS behind
            FROM pg_stat_replication WHERE NOT pg_is_in_recovery()
            UNION ALL
            SELECT 'slot', slot_name::text, (pg_current_wal_lsn() - confirmed_flush_lsn)::float8, NULL, NULL
            FROM pg_replication_slots
            WHERE slot_type = 'logical' AND confirmed_flush_lsn IS NOT NULL AND NOT pg_is_in_recovery()
              \(chosen)
            """)
        let now = Date()
        return lock.withLock {
            var reasons: [String] = []
            var seen: [String: (lsn: String, since: Date)] = [:]
            for row in 0..<result.rows.count {
                let name = result.value(row, "name") ?? "?"
                let lag = result.value(row, "lag").flatMap(Double.init)
                if result.value(row, "kind") == "slot" {
                    if let lag, let limit = maxSlotLagBytes, lag > Double(limit) {
                        reasons.append("logical slot \(name) is \(Int64(lag)) bytes behind (--max-slot-lag \(limit))")
                    }
                    continue
                }
                guard let limit = maxReplicaLagSeconds else { continue }
                if let lag, Self.holdsBack(lag: lag, limit: limit) {
                    reasons.append("standby \(name) replay lag \(String(format: lag < 1 ? "%.2f" : "%.1f", lag)) s")
                    continue
                }
                guard let replay = result.value(row, "replay"), result.bool(row, "behind") == true else { continue }
                let since = replaySeen[name].flatMap { $0.lsn == replay ? $0.since : nil } ?? now
                seen[name] = (replay, since)
                let still = now.timeIntervalSince(since)
                if still > limit {
                    reasons.append("standby \(name) replay stopped at \(replay) for \(String(format: "%.1f", still)) s")
                }
            }
            replaySeen = seen
            return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        }
    }
}

/// `--slot` names a slot that is not a logical slot of the store's database; nothing was changed.
public struct SlotNotTheStores: Error, CustomStringConvertible {
    public var slot: String
    /// What the slot is instead.
    public var what: String
    /// The logical slots of the store's database.
    public var slots: [String]

    public var description: String {
        let here = slots.isEmpty ? "none" : slots.joined(separator: ", ")
        return "--slot \(slot): \(what), not a logical slot of the store's database (its logical slots: \(here)); nothing was changed"
    }
}
