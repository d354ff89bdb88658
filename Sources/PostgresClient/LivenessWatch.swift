import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bounds the wait for a server that stopped answering in the middle of a statement.
///
/// A paused or frozen server (a stopped VM, `podman pause`, SIGSTOP) keeps its kernel answering:
/// the TCP connection stays up, keepalive probes and sent data are acknowledged, so neither TCP
/// keepalives nor `tcp_user_timeout` ever end the wait, and libpq would wait forever. So while a
/// statement runs longer than `interval`, a new connection to the same server is tried, with
/// `probeTimeout` as its connect_timeout, every `interval`. A server that answers that probe in
/// any way (even with an error) is alive, and the statement goes on waiting however long it
/// takes. After `failuresToGiveUp` probes in a row got no answer (timeout expired, connection
/// refused), the statement's socket is shut down: libpq returns at once, and the statement fails
/// with `ServerStoppedAnswering`'s message. Nothing is lost: the server rolls back the open
/// transaction when it sees the connection closed.
final class LivenessWatch: @unchecked Sendable {
    struct Settings: Sendable {
        var interval: Double
        var probeTimeout: Int
        var failuresToGiveUp: Int
    }

    private let lock = NSLock()
    private let socketCopy: Int32
    private let probe: () -> Bool
    let settings: Settings
    private let started = DispatchTime.now().uptimeNanoseconds
    private var lastProbe: UInt64
    private var isProbing = false
    private var isFinished = false
    private(set) var failedProbes = 0
    /// Whether the watch shut the statement's socket down.
    private(set) var didCut = false

    /// Watches the statement running on `socket` (duplicated, so the shutdown never reaches a
    /// descriptor libpq closed and the system reused). `probe` says whether the server answers.
    init?(socket: Int32, settings: Settings, probe: @escaping () -> Bool) {
        let copy = dup(socket)
        guard socket >= 0, copy >= 0 else { return nil }
        socketCopy = copy
        self.settings = settings
        self.probe = probe
        lastProbe = started
        LivenessMonitor.shared.add(self)
    }

    /// Ends the watch; after it returns, the socket is never shut down by it.
    func finish() {
        lock.lock()
        isFinished = true
        close(socketCopy)
        lock.unlock()
        LivenessMonitor.shared.remove(self)
    }

    /// Seconds the statement has waited so far.
    var waited: Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

    /// Called by the monitor about once a second: starts a probe when one is due.
    fileprivate func tick(now: UInt64) {
        lock.lock()
        let isDue = !isFinished && !isProbing && Double(now - lastProbe) / 1e9 >= settings.interval
        if isDue { isProbing = true }
        lock.unlock()
        guard isDue else { return }
        DispatchQueue.global().async { [self] in
            let answered = probe()
            lock.lock()
            defer { lock.unlock() }
            isProbing = false
            lastProbe = DispatchTime.now().uptimeNanoseconds
            guard !isFinished else { return }
            failedProbes = answered ? 0 : failedProbes + 1
            if failedProbes >= settings.failuresToGiveUp {
                didCut = true
                isFinished = true
                shutdown(socketCopy, Int32(SHUT_RDWR))
            }
        }
    }
}

/// One thread for every watch of the process: wakes once a second and lets each watch decide.
private final class LivenessMonitor: @unchecked Sendable {
    static let shared = LivenessMonitor()
    private let lock = NSLock()
    private var watches: [ObjectIdentifier: LivenessWatch] = [:]
    private var thread: Thread?

    func add(_ watch: LivenessWatch) {
        lock.lock()
        defer { lock.unlock() }
        watches[ObjectIdentifier(watch)] = watch
        if thread == nil {
            let thread = Thread { [self] in run() }
            thread.name = "orchestrator-liveness"
            thread.start()
            self.thread = thread
        }
    }

    func remove(_ watch: LivenessWatch) {
        lock.lock()
        watches[ObjectIdentifier(watch)] = nil
        lock.unlock()
    }

    private func run() {
        while true {
            Thread.sleep(forTimeInterval: 1)
            lock.lock()
            let current = Array(watches.values)
            lock.unlock()
            let now = DispatchTime.now().uptimeNanoseconds
            current.forEach { $0.tick(now: now) }
        }
    }
}

/// Whether a new connection with `options` gets any answer from the server within its
/// connect_timeout: a refused or timed-out connection is no answer; an authentication failure,
/// "too many clients" or "the database system is starting up" are.
func serverAnswers(options: [(keyword: String, value: String)]) -> Bool {
    guard let connection = connectdb(options) else { return true }
    defer { PQfinish(connection) }
    if PQstatus(connection) == CONNECTION_OK { return true }
    let message = PQerrorMessage(connection).map { String(cString: $0) } ?? ""
    let noAnswer = ["timeout expired", "Connection refused", "No route to host", "Network is unreachable", "server closed the connection unexpectedly"]
    return !noAnswer.contains { message.contains($0) }
}

/// The error of a statement given up on by the liveness watch.
public struct ServerStoppedAnswering {
    static func error(statement: String, server: String, waited: Double, settings: LivenessWatch.Settings) -> PostgresError {
        PostgresError(
            kind: .connection,
            message: "the server stopped answering: no reply to the statement after \(Int(waited.rounded())) s, and \(settings.failuresToGiveUp) new "
                + "connections to \(server) in a row got no answer within \(settings.probeTimeout) s (connect_timeout) either "
                + "(a paused, frozen or unreachable server); the connection was closed, and the server rolls back its open transaction",
            hint: "check the server, then run the command again; ORCHESTRATOR_LIVENESS_SECONDS sets how long a statement waits before the server is probed",
            statement: statement
        )
    }
}
