import Foundation
import PostgresClient
import SQLBuilding

/// The application as a test without a twin store needs it: the same `TwinWriter` thread and
/// bookkeeping, writing one store only (its twin is itself, never written through `both`).
extension TwinWriter {
    /// Every failure stops the writer; nothing is tried again.
    public static let plain = Rules(retried: [], stopsAtSwitchOver: false, stopsAtFailure: true)

    /// `sql` again and again, each statement committing on its own (no transaction block),
    /// `pause` apart, until `stopCounting`; started.
    public static func repeating(url: String, _ sql: SQL, every pause: TimeInterval = 0.01) -> TwinWriter {
        let writer = TwinWriter(url: url, live: "", twin: "", rules: plain) { _, connection in try connection.execute(sql) }
        writer.pauseBetween = pause
        writer.autocommits = true
        writer.start()
        return writer
    }

    /// Each of `statements` once, in order, one transaction each, `pause` apart, on a session
    /// beside `connection`; then the writer ends (`waitUntilDone`). Not started.
    public static func script(sessionsLike connection: PostgresConnection, _ statements: [SQL], every pause: TimeInterval = 0.002) throws -> TwinWriter {
        let next = Script(statements)
        let writer = try TwinWriter(sessionsLike: connection, live: "", twin: "", rules: plain) { _, connection in
            guard let statement = next.take() else { throw Finished() }
            try connection.execute(statement)
        }
        writer.pauseBetween = pause
        return writer
    }

    /// Stops the writer (waiting at most `seconds` for its last transaction); throws the first
    /// failure, else returns the transactions committed.
    public func stopCounting(within seconds: Double = 60) throws -> Int {
        requestStop()
        guard waitUntilDone(within: seconds) else { throw Stuck() }
        if let failure { throw failure.error }
        return commits
    }

    /// The writer did not end within the time given.
    public struct Stuck: Error {}
}

/// The statements of a script not written yet (read on the writer's thread only).
private final class Script: @unchecked Sendable {
    private var left: ArraySlice<SQL>

    init(_ statements: [SQL]) {
        left = statements[...]
    }

    func take() -> SQL? { left.popFirst() }
}
