import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Finding and reaching the database: usage errors exit 64, failures exit 1, and no password is
/// ever printed.
@Suite("Connection failures")
struct ConnectionFailureTests {
    @Test("no --database-url and no DATABASE_URL: libpq's PG* variables decide, and the error names them and DATABASE_URL")
    func noDatabaseURL() throws {
        let result = try OrchestratorBinary.run(
            ["status", "--model", "migrations"], databaseURL: nil,
            environment: ["PGHOST": "127.0.0.1", "PGPORT": "1", "PGPASSWORD": "pg-Secret-9"], clearingLibpqVariables: true
        )
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("error: cannot connect to libpq's defaults (no --database-url or DATABASE_URL; PGHOST=127.0.0.1 PGPORT=1): "), "\(result)")
        #expect(!result.stderr.contains("pg-Secret-9"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("an unreachable server is named in one error line, its password is not")
    func unreachableServer() throws {
        let url = "postgres://someone:pw-Secret-42@127.0.0.1:1/db"
        for command in ["status", "plan", "apply"] {
            let result = try OrchestratorBinary.run([command, "--model", "migrations", "--database-url", url])
            #expect(result.exitCode == 1, "\(command): \(result)")
            #expect(result.stderrLines.count == 1, "\(command): \(result)")
            #expect(result.stderrLines.first?.hasPrefix("error: cannot connect to") == true, "\(command): \(result)")
            #expect(result.stderr.contains("127.0.0.1"), "\(command): \(result)")
            #expect(!result.stderr.contains("pw-Secret-42") && !result.stdout.contains("pw-Secret-42"), "\(command): \(result)")
            #expect(result.stdout.isEmpty, "\(command): \(result)")
        }
    }

    @Test("a wrong password fails with password authentication in the message and neither password", integration)
    func wrongPassword() throws {
        try TestDatabase.withFreshDatabase { url in
            let admin = try PostgresConnection(url: url)
            defer { admin.close() }
            // A server that trusts every connection cannot reject a password; nothing to prove there.
            guard try serverChecksPasswords(admin) else { return }
            let role = "orch_wrong_pw_\(UInt32.random(in: .min ... .max))"
            try admin.execute("CREATE ROLE \(ident: role) LOGIN PASSWORD 'Right-pw-1'")
            defer { _ = try? admin.execute("DROP ROLE IF EXISTS \(ident: role)") }

            let wrongURL = TestDatabase.connectionString(url, user: role, password: "Wrong-pw-2")
            let result = try OrchestratorBinary.run(["status", "--model", "migrations", "--database-url", wrongURL])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.contains("password authentication failed"), "\(result)")
            for secret in ["Right-pw-1", "Wrong-pw-2"] {
                #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret), "\(secret) printed: \(result)")
            }
        }
    }
}

private func serverChecksPasswords(_ admin: PostgresConnection) throws -> Bool {
    let rules = try admin.execute("""
        SELECT count(*) AS n FROM pg_hba_file_rules
        WHERE auth_method IN ('scram-sha-256', 'md5', 'password')
        """)
    return (rules.int(0, "n") ?? 0) > 0
}
