import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 11.11: `--verbose` logs each statement (swift-log) to stderr with its duration and row
/// count, never a password; `--quiet` prints only errors.
@Suite("Output levels")
struct OutputLevelTests {
    @Test("apply --verbose writes each statement with its duration and rows to stderr; the URL's password never appears", integration)
    func verboseLogsStatements() throws {
        try TestDatabase.withFreshDatabase { url in
            // A role of its own, so that the password is the one the server checks, if it checks any.
            let admin = try PostgresConnection(url: url)
            defer { admin.close() }
            let role = "orch_verbose_\(UInt32.random(in: .min ... .max))"
            try admin.execute("CREATE ROLE \(ident: role) LOGIN SUPERUSER PASSWORD 'Verbose-pw-31'")
            defer {
                _ = try? admin.execute("DROP OWNED BY \(ident: role)")
                _ = try? admin.execute("DROP ROLE IF EXISTS \(ident: role)")
            }
            let withPassword = TestDatabase.connectionString(url, user: role, password: "Verbose-pw-31")
            let result = try OrchestratorBinary.run(["apply", "--model", "migrations", "--verbose", "--database-url", withPassword])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdoutLines.last?.hasPrefix("store recipes: now at 'Recipes 3'") == true, "\(result)")
            let statements = result.stderrLines.filter { $0.hasPrefix("sql: ") }
            #expect(statements.count >= 10, "\(result)")
            let shape = /^sql: \d+\.\d ms, \d+ rows?: \S.*$/
            #expect(statements.allSatisfy { $0.wholeMatch(of: shape) != nil }, "\(result)")
            #expect(statements.contains { $0.contains(": CREATE TABLE \"recipes\".\"recipe\"") }, "\(result)")
            #expect(statements.contains { $0.hasSuffix(": COMMIT") }, "\(result)")
            // Continuation lines of multi-line statements are indented; nothing else is on stderr.
            #expect(result.stderrLines.allSatisfy { $0.hasPrefix("sql: ") || $0.hasPrefix("     ") }, "\(result)")
            #expect(!result.stderr.contains("Verbose-pw-31") && !result.stdout.contains("Verbose-pw-31"), "\(result)")
        }
    }

    @Test("a SELECT's row count is the rows it returned", integration)
    func verboseCountsRows() throws {
        try TestDatabase.withFreshDatabase { url in
            _ = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: url)
            let result = try OrchestratorBinary.run(["status", "--model", "migrations", "--verbose"], databaseURL: url)
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdoutLines.contains("compatible: yes"), "\(result)")
            // The store's metadata row is read: one row.
            #expect(result.stderrLines.contains { $0.wholeMatch(of: /^sql: \d+\.\d ms, 1 row: .*/) != nil }, "\(result)")
        }
    }

    @Test("--quiet prints nothing when all goes well; the exit code tells", integration)
    func quietPrintsNothing() throws {
        try TestDatabase.withFreshDatabase { url in
            for arguments in [["apply"], ["status"], ["status", "--check"], ["plan"], ["history"], ["validate"], ["hash"], ["diagram"]] {
                let result = try OrchestratorBinary.run(arguments + ["--model", "migrations", "--quiet"], databaseURL: url)
                #expect(result.exitCode == 0, "\(arguments): \(result)")
                #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(arguments): \(result)")
            }
        }
    }

    @Test("--quiet still prints errors")
    func quietPrintsErrors() throws {
        let result = try OrchestratorBinary.run(["infer", "--model", "migrations", "--from", "Recipes 9", "--to", "Recipes 3", "--quiet"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr == "error: no version named 'Recipes 9' in migrations (versions: Recipes 1, Recipes 2, Recipes 3)\n", "\(result)")
    }

    @Test("--verbose and --quiet together are a usage error")
    func verboseAndQuiet() throws {
        let result = try OrchestratorBinary.run(["validate", "--model", "migrations", "--verbose", "--quiet"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("--verbose and --quiet cannot be used together"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }
}
