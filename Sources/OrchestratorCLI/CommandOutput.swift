import ArgumentParser
import Foundation
import Logging
import PostgresClient

/// `--verbose` and `--quiet`, which every command takes (they ride along in `ModelOptions`,
/// the group every command has).
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Also write each SQL statement run to stderr, with its duration and row count (never a password or a bound value).")
    var verbose = false

    @Flag(name: .long, help: "Print only errors: no report, notes, warnings or progress; the exit code tells the outcome.")
    var quiet = false

    /// Parsing ends here before any command runs: the level applies from the first line on.
    func validate() throws {
        if verbose && quiet { throw ValidationError("--verbose and --quiet cannot be used together") }
        CommandOutput.level = quiet ? .quiet : verbose ? .verbose : .normal
    }
}

/// How much a command prints, for the whole process (one command runs per process).
enum CommandOutput {
    enum Level: Sendable {
        case quiet, normal, verbose
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var storedLevel = Level.normal

    static var level: Level {
        get { lock.withLock { storedLevel } }
        set { lock.withLock { storedLevel = newValue } }
    }

    static var isQuiet: Bool { level == .quiet }

    /// The statement log of `--verbose`, nil otherwise: lines `sql: 0.4 ms, 1 row: SELECT …` on stderr.
    static var statementLogger: Logger? {
        guard level == .verbose else { return nil }
        var logger = Logger(label: "orchestrator.sql") { _ in StandardErrorLogHandler() }
        logger.logLevel = .debug
        return logger
    }

    /// Writes `text` as it is to stdout, unless `--quiet`.
    static func writeStandardOutput(_ text: String) {
        guard !isQuiet else { return }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes `text` as it is to stderr, unless `--quiet`; errors use `printError`, which always writes.
    static func writeStandardError(_ text: String) {
        guard !isQuiet else { return }
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// swift-log's handler for the statement log: one line per message on stderr, continuation
/// lines indented, control characters escaped as in all text output.
struct StandardErrorLogHandler: LogHandler {
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let lines = event.message.description.split(separator: "\n", omittingEmptySubsequences: false)
        let text = "sql: " + lines.joined(separator: "\n     ") + "\n"
        FileHandle.standardError.write(Data(TerminalText.escaped(text).utf8))
    }
}
