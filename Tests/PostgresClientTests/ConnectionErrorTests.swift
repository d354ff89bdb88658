import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("Connection errors")
struct ConnectionErrorTests {
    @Test("an unreachable server is named in the error, the password is not")
    func unreachableServer() {
        let error = connectionError("postgres://u:pw-123@127.0.0.1:1/x")
        #expect(error?.kind == .connection)
        #expect(error?.description.contains("127.0.0.1") == true)
        #expect(error?.description.contains("pw-123") == false)
        #expect(error?.message.contains("pw-123") == false)
    }

    @Test("a malformed URL that libpq would echo back is refused without quoting it")
    func malformedURLIsNotQuoted() {
        let error = connectionError("postgres://u:pw-123@[::1")
        #expect(error?.kind == .connection)
        #expect(error?.description.contains("pw-123") == false)
        #expect(error?.description.contains("an IPv6 address has no closing ]") == true)
    }

    @Test("a wrong password is rejected without the password appearing in the error", integration)
    func wrongPassword() throws {
        try TestDatabase.withFreshConnection { admin in
            let passwordRules = try admin.execute("""
                SELECT count(*) AS n FROM pg_hba_file_rules
                WHERE auth_method IN ('scram-sha-256', 'md5', 'password')
                """)
            // A server that trusts every connection cannot reject a password; nothing to prove there.
            guard let ruleCount = passwordRules.int(0, "n"), ruleCount > 0 else { return }
            try withTemporaryRole(password: "S3cret-pw", on: admin) { role in
                let url = try #require(TestDatabase.adminURL)
                let error = connectionError(TestDatabase.connectionString(url, user: role, password: "Wr0ng-pw-77"))
                #expect(error?.kind == .connection)
                #expect(error?.description.contains("password authentication failed") == true)
                for secret in ["Wr0ng-pw-77", "S3cret-pw"] {
                    #expect(error?.description.contains(secret) == false)
                    #expect(error?.message.contains(secret) == false)
                }
            }
        }
    }

    @Test("a connection describes its target without the password", integration)
    func descriptionIsRedacted() throws {
        try TestDatabase.withFreshConnection { admin in
            try withTemporaryRole(password: "S3cret-pw", on: admin) { role in
                let url = try #require(TestDatabase.adminURL)
                let connection = try PostgresConnection(
                    url: TestDatabase.connectionString(url, user: role, password: "S3cret-pw")
                )
                defer { connection.close() }
                #expect(try connection.execute("SELECT current_user AS name")[row: 0, column: "name"] == role)
                #expect(!connection.description.contains("S3cret-pw"))
                #expect(connection.description.contains("***"))
            }
        }
    }
}

private func connectionError(_ url: String) -> PostgresError? {
    do {
        let connection = try PostgresConnection(url: url)
        connection.close()
        Issue.record("connecting to \(redactedConnectionString(url)) unexpectedly succeeded")
        return nil
    } catch let error as PostgresError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

/// Roles are cluster-wide, so each test makes its own and drops it afterwards.
private func withTemporaryRole(password: String, on admin: PostgresConnection, _ body: (String) throws -> Void) throws {
    let role = "orchestrator_test_role_\(UInt32.random(in: .min ... .max))"
    try admin.execute("CREATE ROLE \(ident: role) LOGIN PASSWORD \(literal: password)")
    defer { _ = try? admin.execute("DROP ROLE IF EXISTS \(ident: role)") }
    try body(role)
}
