import Foundation
import PostgresClient

/// One PostgreSQL server in its own container, published on its own loopback address
/// (127.0.0.N:5432) and nowhere else. Tests connect through `url` only; `networkAddress` is for
/// other servers (a standby's primary_conninfo, a subscription's connection).
///
/// Faults on demand: `stop` (a clean shutdown), `kill` (SIGKILL, a crash), `pause` (every
/// process frozen: the kernel still accepts connections, nobody answers), and `start` /
/// `unpause` to bring it back with its data. `remove` deletes the container and its volumes.
public final class PostgresContainer: @unchecked Sendable {
    public let runtime: ContainerRuntime
    public let name: String
    /// The loopback address the server is published on, port 5432.
    public let address: String
    /// The password of the superuser `postgres`.
    public let password: String

    init(runtime: ContainerRuntime, name: String, address: String, password: String) {
        self.runtime = runtime
        self.name = name
        self.address = address
        self.password = password
    }

    /// The superuser's URL for `database`, through the published address. A connect_timeout
    /// keeps a test from waiting on a paused server.
    public func url(database: String = "postgres") -> String {
        "postgres://postgres:\(password)@\(address):5432/\(database)?connect_timeout=5"
    }

    /// The address other containers reach this server at, on the runtime's network.
    public func networkAddress() throws -> String {
        try runtime.retrying(["inspect", "--format", "{{.NetworkSettings.IPAddress}}", name], timeout: 60)
    }

    public func stop() throws { try runtime.retrying(["stop", "--time", "20", name]) }
    public func kill() throws { try runtime.retrying(["kill", "--signal", "KILL", name]) }
    public func pause() throws { try runtime.retrying(["pause", name]) }
    public func unpause() throws { try runtime.retrying(["unpause", name]) }

    /// Starts a stopped or killed container again and waits until the server answers.
    public func start(timeout: TimeInterval = 180) throws {
        try runtime.retrying(["start", name])
        try waitUntilReady(timeout: timeout)
    }

    /// Removes the container and its volumes (a paused one is unpaused first).
    public func remove() {
        if (try? runtime.run(["inspect", "--format", "{{.State.Status}}", name], timeout: 60)) == "paused" {
            _ = try? runtime.run(["unpause", name], timeout: 60)
        }
        _ = try? runtime.retrying(["rm", "--force", "--volumes", name], attempts: 2, timeout: 120)
    }

    /// The last lines of the server's log, for error messages.
    public func logTail(_ lines: Int = 15) -> String {
        (try? ProcessRun.run([runtime.executable, "logs", "--tail", String(lines), name], timeout: 30))
            .map { ($0.stdout + $0.stderr).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "(no log)"
    }

    /// Runs `script` with bash inside the container as the user postgres (PGDATA is set).
    @discardableResult
    public func shell(_ script: String) throws -> String {
        try runtime.retrying(["exec", "--user", "postgres", name, "bash", "-c", script], timeout: 120)
    }

    /// Waits until the server answers `SELECT 1` through the published address.
    public func waitUntilReady(timeout: TimeInterval = 180) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError = ""
        while Date() < deadline {
            do {
                let connection = try PostgresConnection(url: url())
                defer { connection.close() }
                try connection.execute("SELECT 1")
                return
            } catch {
                lastError = String(describing: error)
                // The server answers, and will never let us in: no use waiting.
                if lastError.contains("password authentication failed") {
                    throw ContainerError(command: "start \(name)", message: "\(lastError); the end of its log:\n\(logTail())")
                }
            }
            let state = try? runtime.run(["inspect", "--format", "{{.State.Status}}", name], timeout: 60)
            if let state, ["exited", "stopped", "dead"].contains(state) {
                throw ContainerError(command: "start \(name)", message: "the container is \(state); the end of its log:\n\(logTail())")
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw ContainerError(
            command: "start \(name)",
            message: "no answer on \(address):5432 within \(Int(timeout)) s (last: \(lastError)); the end of its log:\n\(logTail())"
        )
    }
}

extension PostgresContainer {
    private static let addresses = AddressPool()

    /// Starts a server in a new container (image and runtime from the environment) and waits
    /// until it answers. `settings` become `postgres -c name=value`; `command`, when given,
    /// replaces the image's (it runs as the user postgres with bash, e.g. a standby's
    /// pg_basebackup). `password` is the superuser's: a new random one unless given (a
    /// standby copies its primary's). Tries other loopback addresses when one is taken.
    public static func launch(
        role: String, settings: [String: String] = [:], command: String? = nil, environment: [String: String] = [:], password: String? = nil
    ) throws -> PostgresContainer {
        let runtime = try ContainerRuntime.required()
        let password = password ?? UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var failures: [String] = []
        for _ in 1...4 {
            let address = addresses.next()
            let name = "orchestrator-test-\(runtime.runLabel)-\(role)-\(UUID().uuidString.prefix(8).lowercased())"
            var arguments = [
                "run", "--detach", "--name", name, "--label", "orchestrator.test-run=\(runtime.runLabel)", "--shm-size", "256m",
                "--publish", "\(address):5432:5432", "--env", "POSTGRES_PASSWORD=\(password)",
                "--env", "POSTGRES_INITDB_ARGS=--encoding=UTF8 --locale=C",
            ]
            for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["--env", "\(key)=\(value)"] }
            let options = (["fsync": "off", "full_page_writes": "off"].merging(settings) { $1 })
                .sorted { $0.key < $1.key }.flatMap { ["-c", "\($0.key)=\($0.value)"] }
            if let command {
                arguments += ["--user", "postgres", "--entrypoint", "bash", runtime.image, "-c", command + " " + options.joined(separator: " ")]
            } else {
                arguments += [runtime.image] + options
            }
            let server = PostgresContainer(runtime: runtime, name: name, address: address, password: password)
            do {
                try runtime.run(arguments, timeout: 180)
                try server.waitUntilReady()
                return server
            } catch {
                failures.append(String(describing: error))
                server.remove()
            }
        }
        throw ContainerError(command: "launch \(role)", message: "4 attempts failed:\n" + failures.joined(separator: "\n"))
    }
}

/// Loopback addresses 127.0.0.3 … 127.0.0.254 in turn from a random start (127.0.0.2 is make
/// test's server); a taken one makes the runtime fail, and the next attempt takes the next.
final class AddressPool: @unchecked Sendable {
    private let lock = NSLock()
    private var last = Int.random(in: 3...254)

    func next() -> String {
        lock.lock()
        defer { lock.unlock() }
        last = last >= 254 ? 3 : last + 1
        return "127.0.0.\(last)"
    }
}
