import Foundation
import PostgresClient
@testable import Engine

/// An `apply` on a session of its own, in a thread, so that a test can look at the store (and
/// steer the run) while it runs: its progress events are kept, and a test waits for one.
final class BackgroundApply: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [ProgressEvent] = []
    private var outcome: Result<ApplyReport, Error>?
    private let finished = DispatchSemaphore(value: 0)
    let store: String

    /// Starts `migrator`'s apply on a new session to `connection`'s database.
    init(_ migrator: StoreMigrator, options: ApplyOptions, from connection: PostgresConnection) throws {
        store = migrator.store
        let session = try connection.reconnect()
        var migrator = migrator
        migrator.connection = session
        let lent = Lent(migrator)
        Thread.detachNewThread { [self] in
            let result = Result { try lent.value.apply(options: options, onProgress: { event in self.lock.withLock { self.seen.append(event) } }) }
            session.close()
            lock.withLock { outcome = result }
            finished.signal()
        }
    }

    var events: [ProgressEvent] { lock.withLock { seen } }

    /// Waits (at most `seconds`) for an event `matching`; true when one came.
    func waitForEvent(within seconds: Double = 120, _ matching: (ProgressEvent) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if events.contains(where: matching) { return true }
            if lock.withLock({ outcome != nil }) { return events.contains(where: matching) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// The pauses whose reason starts with `prefix`.
    func pauses(_ prefix: String) -> Int {
        events.filter { $0.kind == .paused && $0.reason?.hasPrefix(prefix) == true }.count
    }

    /// Whether the run has ended.
    var hasEnded: Bool { lock.withLock { outcome != nil } }

    /// Waits (at most `seconds`) for the run to end, and returns how.
    func result(within seconds: Double = 180) -> Result<ApplyReport, Error>? {
        _ = finished.wait(timeout: .now() + seconds)
        return lock.withLock { outcome }
    }

    /// After a test that failed half way: lets a waiting run go (resumed, proceeding) and
    /// waits for it, so that its session is gone before the database is dropped.
    func end(on connection: PostgresConnection) {
        guard !hasEnded else { return }
        _ = try? StoreControls.set(store: store, paused: false, on: connection)
        _ = try? StoreControls.proceed(store: store, on: connection)
        _ = result()
    }
}

/// The migrator, handed to the run's thread (the test touches it no more).
private final class Lent: @unchecked Sendable {
    let value: StoreMigrator
    init(_ value: StoreMigrator) { self.value = value }
}
