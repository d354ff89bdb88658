import Foundation
import Testing

/// What one run of the `orchestrator` executable printed and how it ended.
struct CLIResult: CustomStringConvertible {
    var exitCode: Int32
    var stdout: String
    var stderr: String

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Everything, for failure messages.
    var description: String { "exit \(exitCode)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// The built `orchestrator` executable, run as a user would run it: from the repository's root,
/// with an explicit environment.
enum OrchestratorBinary {
    /// The repository's root, found from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable beside the test bundle (same bin folder), else `.build/debug`.
    static func location(of executable: String = "orchestrator") throws -> URL {
        var folders: [URL] = []
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        folders.append(Bundle.main.bundleURL)
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent())
        // macOS: the test bundle is a folder `….xctest` inside the bin folder.
        folders += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }.map { $0.deletingLastPathComponent() }
        folders.append(repository.appendingPathComponent(".build/debug"))
        for folder in folders {
            let candidate = folder.appendingPathComponent(executable)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw BinaryNotFound(searched: folders.map(\.path))
    }

    /// Runs `orchestrator arguments…` to its end. `databaseURL` becomes `DATABASE_URL`; nil
    /// removes it from the environment. `environment` is set over the inherited one, after
    /// libpq's PG* variables are removed when `clearingLibpqVariables`.
    static func run(
        _ arguments: [String], databaseURL: String? = nil, executable: String = "orchestrator",
        environment: [String: String] = [:], clearingLibpqVariables: Bool = false
    ) throws -> CLIResult {
        try RunningOrchestrator(
            arguments, databaseURL: databaseURL, executable: executable, environment: environment, clearingLibpqVariables: clearingLibpqVariables
        ).finish()
    }
}

struct BinaryNotFound: Error, CustomStringConvertible {
    var searched: [String]
    var description: String {
        "no orchestrator executable in \(searched.joined(separator: ", ")): run `swift build` (with the same --scratch-path) first"
    }
}

/// One started `orchestrator` process. Output goes to temporary files, so neither stream can
/// fill a pipe and block the process, and several can run at once.
final class RunningOrchestrator {
    private let process = Process()
    private let outputFolder: URL
    private let stdoutFile: URL
    private let stderrFile: URL

    init(
        _ arguments: [String], databaseURL: String?, executable: String = "orchestrator",
        environment extraEnvironment: [String: String] = [:], clearingLibpqVariables: Bool = false
    ) throws {
        outputFolder = FileManager.default.temporaryDirectory.appendingPathComponent("orchestrator-cli-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        stdoutFile = outputFolder.appendingPathComponent("stdout")
        stderrFile = outputFolder.appendingPathComponent("stderr")
        try Data().write(to: stdoutFile)
        try Data().write(to: stderrFile)

        var environment = ProcessInfo.processInfo.environment
        if clearingLibpqVariables { environment = environment.filter { !$0.key.hasPrefix("PG") } }
        environment.merge(extraEnvironment) { $1 }
        environment["DATABASE_URL"] = databaseURL
        process.environment = environment
        process.executableURL = try OrchestratorBinary.location(of: executable)
        process.arguments = arguments
        process.currentDirectoryURL = OrchestratorBinary.repository
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: outputFolder)
            throw error
        }
    }

    /// The output files go with the process, also when a test threw before `finish()`.
    deinit {
        try? FileManager.default.removeItem(at: outputFolder)
    }

    var isRunning: Bool { process.isRunning }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Kills the process at once (SIGKILL): no cleanup runs, as in a crash or an OOM kill.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits until the process has printed `text` on stdout (true), or has ended or `timeout`
    /// seconds have passed without it (false).
    func waitForOutput(containing text: String, timeout: TimeInterval = 120) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let printed = try? String(contentsOf: stdoutFile, encoding: .utf8), printed.contains(text) { return true }
            if !process.isRunning { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Waits for the process and reads what it printed.
    func finish() throws -> CLIResult {
        process.waitUntilExit()
        return CLIResult(
            exitCode: process.terminationStatus,
            stdout: try String(contentsOf: stdoutFile, encoding: .utf8),
            stderr: try String(contentsOf: stderrFile, encoding: .utf8)
        )
    }
}

/// A fresh temporary folder for `body`, removed afterwards.
func withTemporaryFolder<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("orchestrator-cli-fixture-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}

/// Writes `text` to `folder/name`, creating intermediate folders.
@discardableResult
func write(_ text: String, to name: String, in folder: URL) throws -> URL {
    let file = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: file)
    return file
}

/// Parses one JSON object printed on stdout.
func jsonObject(_ text: String) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let object = value as? [String: Any] else { throw NotAJSONObject(text: text) }
    return object
}

struct NotAJSONObject: Error, CustomStringConvertible {
    var text: String
    var description: String { "expected one JSON object, got: \(text)" }
}

extension RunningOrchestrator {
    /// Kills the process (SIGKILL) and returns what it printed, having checked it failed; or
    /// records an issue and returns nil when it finished before it could be killed.
    func killedWhileRunning() throws -> CLIResult? {
        guard isRunning else {
            Issue.record("apply finished before it could be killed: \(try finish())")
            return nil
        }
        kill()
        let killed = try finish()
        #expect(killed.exitCode != 0, "\(killed)")
        return killed
    }
}
