import Foundation
import Testing
import TestSupport

/// Issue 9.1: malformed URLs and conninfo strings, from the flag and from DATABASE_URL, in text
/// and JSON, through every command that connects: the password is in neither stream.
@Suite("Password leaks")
struct PasswordLeakTests {
    /// Each holds the password `Pw-Leak7` or, split by a space, `Pw-Le ak7`.
    static let malformed = [
        "postgress://postgres:Pw-Leak7@127.0.0.1:1/db",
        "http://postgres:Pw-Leak7@127.0.0.1:1/db",
        "postgres:/postgres:Pw-Leak7@127.0.0.1:1/db",
        "POSTGRES://postgres:Pw-Leak7@127.0.0.1:1/db",
        " postgres://postgres:Pw-Leak7@127.0.0.1:1/db",
        "jdbc:postgresql://127.0.0.1:1/db?user=postgres&password=Pw-Leak7",
        "host=127.0.0.1 port=1 passwd=Pw-Leak7",
        "host=127.0.0.1 port=1 password=Pw-Le ak7 dbname=db",
        "postgres://postgres:Pw-Le@ak7@127.0.0.1:1/db",
        "postgres://postgres:Pw-Le/ak7@127.0.0.1:1/db",
    ]
    static let runs: [(command: String, format: String, fromEnvironment: Bool)] = [
        ("status", "text", false), ("plan", "json", true), ("apply", "text", true), ("apply", "json", false),
    ]

    @Test("no piece of the password is printed, and the run exits 1 saying the string is not shown", arguments: malformed)
    func passwordNotPrinted(_ url: String) throws {
        for run in Self.runs {
            var arguments = [run.command, "--model", "migrations", "--format", run.format]
            if !run.fromEnvironment { arguments += ["--database-url", url] }
            let result = try OrchestratorBinary.run(arguments, databaseURL: run.fromEnvironment ? url : "postgres://unused@127.0.0.1:1/x")
            let context = "\(run) \(url.debugDescription): \(result)"
            #expect(result.exitCode == 1, "\(context)")
            for piece in ["Pw-Leak7", "Pw-Le", "ak7"] {
                #expect(!result.stdout.contains(piece) && !result.stderr.contains(piece), "\(context)")
            }
            #expect(result.stderrLines.count == 1, "\(context)")
            #expect(result.stderr.hasPrefix("error: cannot connect to the database (connection string not shown): "), "\(context)")
        }
    }
}
