import Foundation
import JSONRendering
import PostgresClient
import SQLBuilding

/// A session using the old version's views: it holds a lock on one of them (it is in a
/// transaction, or a statement, that read or wrote through them).
public struct OldVersionSession: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int
    public var applicationName: String
    public var user: String
    public var state: String

    public var description: String {
        "pid \(pid) (application_name '\(applicationName)', user \(user), \(state))"
    }
}

/// `complete` refused: sessions still use the old version's views; nothing was changed.
public struct OldVersionInUse: Error, CustomStringConvertible {
    public var store: String
    public var viewsSchema: String
    public var sessions: [OldVersionSession]

    public var description: String {
        "store \(store): \(sessions.count) session\(sessions.count == 1 ? "" : "s") still use\(sessions.count == 1 ? "s" : "") \(viewsSchema): "
            + sessions.map(\.description).joined(separator: "; ")
            + "; nothing was changed (stop the old release, or run complete --force to end these sessions)"
    }
}

/// `complete` found nothing to complete.
public struct NothingToComplete: Error, CustomStringConvertible {
    public var store: String

    public var description: String {
        "store \(store) serves one version only: nothing to complete (apply --expand serves the previous version beside the new one)"
    }
}

/// What `complete` did.
public struct CompletionReport: Sendable {
    public var store: String
    public var oldVersion: String
    public var newVersion: String
    public var viewsSchema: String
    /// The deferred statements run, in order.
    public var statements: [String]
    /// Sessions `--force` ended.
    public var endedSessions: [OldVersionSession]
    public var durationMilliseconds: Int
    /// A heavyweight expansion: the `apply --expand` run switched over on `complete`'s proceed
    /// (`statements`: the views' drop, in its swap).
    public var switchedOver = false
}

/// `orchestrator complete --store S` (docs/rolling-deploys.md): Core Data's "finish deferred
/// migration".
/// 1. Read the store's expansion (`ExpansionRecord`); none, nothing to do.
/// 2. Take the store's advisory lock, as `apply` does.
/// 3. Sessions holding a lock on a relation of the views schema use the old version: refused,
///    naming them, unless `force`, which ends them (`pg_terminate_backend`).
/// 4. One transaction under `lock_timeout`, retried: drop the views schema, run the deferred
///    statements, delete the expansion and add a `complete` row to the history.
public struct ExpansionCompletion {
    public var connection: PostgresConnection
    public var store: String

    public init(connection: PostgresConnection, store: String) {
        self.connection = connection
        self.store = store
    }

    /// Sessions other than this one holding a lock on a relation of `schema`: client sessions
    /// only (an autovacuum worker's lock is not a release's, and gives way to DDL by itself).
    public static func sessions(using schema: String, on connection: PostgresConnection) throws -> [OldVersionSession] {
        let result = try connection.execute("""
            SELECT DISTINCT a.pid, coalesce(a.application_name, '') AS application_name, coalesce(a.usename::text, '') AS usename,
                   coalesce(a.state, '') AS state
            FROM pg_catalog.pg_locks l
            JOIN pg_catalog.pg_class c ON c.oid = l.relation
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
            WHERE n.nspname = \(schema) AND l.pid <> pg_catalog.pg_backend_pid() AND a.backend_type = 'client backend'
              AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
            ORDER BY a.pid
            """)
        return result.rows.indices.map { row in
            OldVersionSession(
                pid: Int(result.int(row, "pid") ?? 0), applicationName: result.value(row, "application_name") ?? "",
                user: result.value(row, "usename") ?? "", state: result.value(row, "state") ?? ""
            )
        }
    }

    /// `--force`: ends the sessions (`pg_terminate_backend`).
    static func end(_ sessions: [OldVersionSession], on connection: PostgresConnection) throws {
        for session in sessions {
            try connection.execute("SELECT pg_catalog.pg_terminate_backend(\(literal: Int64(session.pid)))")
        }
    }

    public func complete(force: Bool, options: ApplyOptions = ApplyOptions(), onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }) throws -> CompletionReport {
        let started = Date()
        guard let recorded = try ExpansionRecord.read(store: store, on: connection) else { throw NothingToComplete(store: store) }
        // Heavyweight: the run waiting to switch over holds the store's lock, and does the work.
        if recorded.inFlight.servesNewVersion(of: store) { return try completeHeavyweight(recorded, force: force, started: started) }
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        // Read again under the lock: another `complete` may have run meanwhile.
        guard let expansion = try ExpansionRecord.read(store: store, on: connection) else { throw NothingToComplete(store: store) }
        let sessions = try Self.sessions(using: expansion.viewsSchema, on: connection)
        if !sessions.isEmpty {
            guard force else { throw OldVersionInUse(store: store, viewsSchema: expansion.viewsSchema, sessions: sessions) }
            try Self.end(sessions, on: connection)
        }
        let statements = ["DROP SCHEMA IF EXISTS \(quoteIdentifier(expansion.viewsSchema)) CASCADE"] + expansion.deferred.map(\.sql)
        try options.executionPolicy.transaction(on: connection) {
            for statement in statements { try connection.execute(SQL(unsafeRaw: statement)) }
            try ExpansionRecord.delete(store: store, on: connection)
            try connection.execute(history(expansion, statements: statements, started: started))
        }
        return CompletionReport(
            store: store, oldVersion: expansion.oldVersion, newVersion: expansion.newVersion, viewsSchema: expansion.viewsSchema,
            statements: statements, endedSessions: sessions, durationMilliseconds: milliseconds(since: started)
        )
    }

    /// The `complete` row: from the old version (its hash as the `expand` row recorded it) to
    /// the store's.
    private func history(_ expansion: ExpansionRecord, statements: [String], started: Date) -> SQL {
        let metadata = MetadataSchema.schema
        let text = ISO8601DateFormatter.withFractionalSeconds.string(from: started)
        let json = JSONValue.array(statements.map(JSONValue.string)).rendered
        return """
            INSERT INTO \(ident: metadata, "migrations")
                (store, kind, from_version, to_version, from_hash, to_hash, statements, rows, started_at, finished_at,
                 duration_ms, applied_by, outcome, error)
            VALUES (\(store), 'complete', \(expansion.oldVersion), \(expansion.newVersion),
                    (SELECT from_hash FROM \(ident: metadata, "migrations") WHERE store = \(store) AND kind = 'expand' AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1),
                    (SELECT model_hash FROM \(ident: metadata, "stores") WHERE store = \(store)),
                    \(json)::jsonb, 0, \(text)::timestamptz, clock_timestamp(), \(milliseconds(since: started)),
                    current_user || ' (' || \(StoreMigrator.operatingSystemUser) || ')', 'succeeded', NULL)
            """
    }
}
