import Foundation
import PostgresClient

/// Sessions to the main session's server, opened on threads of their own while the main session
/// works (the resume checks, the install, the prepare pass), so that the write guard and the
/// passes run at once do not each wait for a connection (a few milliseconds each, most of an
/// apply of a small store: authentication, then the session's settings).
/// Every wait is bounded by libpq's connect timeout.
final class SessionsOpening: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var opened: [Result<PostgresConnection, Error>] = []
    private var pending: Int
    private var isClosed = false

    /// Starts opening `count` sessions like `connection` (`reconnect`), one after another on one
    /// thread, so that the first (the write guard's) is ready soonest: opening them all at once
    /// made each slower where the processors are busy (authentication is work on both sides).
    init(from connection: PostgresConnection, count: Int) {
        pending = count
        guard count > 0 else { return }
        DispatchQueue.global().async { [self] in
            for _ in 0..<count {
                guard !condition.withLock({ isClosed }) else { return }
                let result = Result { try connection.reconnect() }
                condition.lock()
                defer { condition.unlock() }
                pending -= 1
                if isClosed {
                    if case .success(let session) = result { session.close() }
                } else {
                    opened.append(result)
                }
                condition.broadcast()
            }
        }
    }

    /// The next session opened, once one is; nil when every one was taken. A session that
    /// could not be opened throws its error here.
    func take() throws -> PostgresConnection? {
        condition.lock()
        defer { condition.unlock() }
        while opened.isEmpty && pending > 0 && !isClosed { condition.wait() }
        guard !opened.isEmpty else { return nil }
        return try opened.removeFirst().get()
    }

    /// Closes the sessions not taken, those still opening once they are.
    func close() {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        for case .success(let session) in opened { session.close() }
        opened = []
    }
}
