import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The container runtime (podman or docker) and PostgreSQL image the container suites start
/// servers with, from the environment `make test` sets (scripts/containers/with-containers.sh):
/// `ORCHESTRATOR_CONTAINER_RUNTIME`, `POSTGRES_IMAGE`, and `ORCHESTRATOR_TEST_RUN`, the label
/// every container of the run carries so that make test removes them all afterwards.
public struct ContainerRuntime: Sendable {
    /// `podman` or `docker`, or a path to one.
    public var executable: String
    public var image: String
    public var runLabel: String

    /// The runtime of the environment; nil when none is configured.
    public static let configured: ContainerRuntime? = {
        let environment = ProcessInfo.processInfo.environment
        guard let executable = environment["ORCHESTRATOR_CONTAINER_RUNTIME"], !executable.isEmpty,
              let image = environment["POSTGRES_IMAGE"], !image.isEmpty else { return nil }
        let run = environment["ORCHESTRATOR_TEST_RUN"].flatMap { $0.isEmpty ? nil : $0 } ?? "adhoc-\(getpid())"
        return ContainerRuntime(executable: executable, image: image, runLabel: run)
    }()

    /// The configured runtime; a test that needs one fails with this error under `CI=true`.
    public static func required() throws -> ContainerRuntime {
        guard let configured else { throw ContainerError(command: "-", message: Self.missing) }
        return configured
    }

    static let missing = "no container runtime: set ORCHESTRATOR_CONTAINER_RUNTIME (podman or docker) and POSTGRES_IMAGE, as make test does"

    /// Runs the runtime with `arguments` and returns its standard output, trimmed. A run that
    /// takes longer than `timeout` seconds is killed; a non-zero exit throws with its stderr.
    @discardableResult
    public func run(_ arguments: [String], timeout: TimeInterval = 120) throws -> String {
        let output = try ProcessRun.run([executable] + arguments, timeout: timeout)
        guard output.exitCode == 0 else {
            let reason = output.timedOut ? "no answer within \(Int(timeout)) s (killed)" : "exit \(output.exitCode): \(output.stderr)"
            throw ContainerError(command: ([executable] + arguments.prefix(3)).joined(separator: " "), message: reason)
        }
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `run`, tried `attempts` times with a pause between: runtimes fail now and then for
    /// reasons of their own (a storage lock, a network set up late).
    @discardableResult
    public func retrying(_ arguments: [String], attempts: Int = 3, timeout: TimeInterval = 120) throws -> String {
        var failure: Error?
        for attempt in 1...attempts {
            do {
                return try run(arguments, timeout: timeout)
            } catch {
                failure = error
                if attempt < attempts { Thread.sleep(forTimeInterval: Double(attempt)) }
            }
        }
        throw failure!
    }
}

/// Marks a test that starts its own PostgreSQL containers: skipped without a runtime, except
/// under `CI=true`, where it runs and fails on the missing runtime instead.
public let containers: ConditionTrait = .enabled(
    if: ContainerRuntime.configured != nil || TestDatabase.isRequired,
    "set ORCHESTRATOR_CONTAINER_RUNTIME and POSTGRES_IMAGE (make test does) to run the container suites"
)

public struct ContainerError: Error, CustomStringConvertible {
    public var command: String
    public var message: String
    public var description: String { "\(command): \(message)" }
}

/// A child process with a deadline, spawned with posix_spawn and reaped with waitpid.
///
/// Not Foundation's `Process`: `podman run --detach` leaves conmon running, and Process saw
/// such a run as never ending (its wait hung after the container had started). The child gets
/// no descriptor but its standard ones, so conmon holds nothing of ours
/// either (a bash wrapper closes them): no pipe of another `Process` stays open while a
/// container runs. Output goes to
/// files, which a child can never block on.
enum ProcessRun {
    struct Output {
        var exitCode: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
    }

    static func run(_ command: [String], timeout: TimeInterval) throws -> Output {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("orchestrator-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outPath = folder.appendingPathComponent("out").path, errPath = folder.appendingPathComponent("err").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Every other descriptor the test process has open (no closefrom in Swift's Glibc).
        // No redirection on the loop: bash would keep stderr's saved copy in a descriptor the
        // loop closes, and the command's stderr would be lost.
        let closingTheRest = "for f in /proc/self/fd/*; do n=${f##*/}; if [ \"$n\" -gt 2 ] && [ -e \"/proc/self/fd/$n\" ]; then eval \"exec $n>&-\"; fi; done; exec \"$@\""
        let arguments = (["/bin/bash", "-c", closingTheRest, "bash"] + command).map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, arguments + [nil], environ)
        guard spawned == 0 else {
            throw ContainerError(command: command.prefix(3).joined(separator: " "), message: "could not start it (posix_spawn: \(String(cString: strerror(spawned))))")
        }

        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var timedOut = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno != EINTR) { break }
            if Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let exited = (status & 0x7f) == 0
        let exitCode: Int32 = timedOut ? -1 : (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f))
        let text = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Output(exitCode: exitCode, stdout: text(outPath), stderr: text(errPath), timedOut: timedOut)
    }
}
