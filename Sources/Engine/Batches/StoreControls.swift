import Foundation
import PostgresClient
import SQLBuilding

/// `orchestrator control pause|resume|proceed`: one row per store in `orchestrator.controls`
/// (docs/metadata-schema.md), read between the batches of every run of that store. A paused
/// store's runs wait after their current batch, as "paused by orchestrator control", until it
/// is resumed or their `--pause-timeout` runs out (they then stop, resumably). `proceed` lets
/// a run postponed before its switch-over go on (`PostponedSwitchOver`).
public struct StoreControls: BetweenBatches {
    public var store: String

    public static let table = "controls"
    public static let pausedReason = "paused by orchestrator control"

    public init(store: String) {
        self.store = store
    }

    public func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
        let row = try connection.execute("""
            SELECT updated_by, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS since
            FROM \(ident: MetadataSchema.schema, Self.table) WHERE store = \(store) AND paused
            """)
        guard !row.isEmpty else { return .proceed }
        let by = row.value(0, "updated_by") ?? "?", since = row.value(0, "since") ?? "?"
        return .pause(reason: "\(Self.pausedReason) (by \(by) at \(since); orchestrator control resume --store \(store) lets it go on)")
    }

    /// Pauses (`paused` true) or resumes the store's runs; a run between batches sees it at
    /// its next question. Returns whether the store was paused before.
    @discardableResult
    public static func set(store: String, paused: Bool, on connection: PostgresConnection) throws -> Bool {
        try MetadataSchema.bootstrap(on: connection)
        return try connection.transaction {
            let before = try connection.execute("SELECT paused FROM \(ident: MetadataSchema.schema, table) WHERE store = \(store) FOR UPDATE")
            _ = try connection.execute("""
                INSERT INTO \(ident: MetadataSchema.schema, table) (store, paused) VALUES (\(store), \(paused))
                ON CONFLICT (store) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now(), updated_by = current_user
                """)
            return !before.isEmpty && before.bool(0, "paused") == true
        }
    }

    /// Whether the store's runs are paused now.
    public static func isPaused(store: String, on connection: PostgresConnection) throws -> Bool {
        guard try MetadataSchema.exists(on: connection) else { return false }
        let present = try connection.execute("SELECT to_regclass(\(quoteIdentifier(MetadataSchema.schema) + "." + table)) IS NOT NULL AS present")
        guard present.bool(0, "present") == true else { return false }
        let row = try connection.execute("SELECT paused FROM \(ident: MetadataSchema.schema, table) WHERE store = \(store)")
        return !row.isEmpty && row.bool(0, "paused") == true
    }

    /// Lets the store's run postponed before its switch-over switch over (`apply
    /// --postpone-switch-over`). Returns the step it holds back (`'v1' -> 'v2' (plan 1a2b…)`), nil when no
    /// run of the store postpones one: a run started later with --postpone-switch-over then
    /// waits for a proceed of its own.
    @discardableResult
    public static func proceed(store: String, on connection: PostgresConnection) throws -> String? {
        try MetadataSchema.bootstrap(on: connection)
        let row = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, table) AS c (store, paused, proceed) VALUES (\(store), false, true)
            ON CONFLICT (store) DO UPDATE SET proceed = true
            RETURNING c.postponed
            """)
        return row.value(0, "postponed")
    }
}
