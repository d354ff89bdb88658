import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("Fresh test databases")
struct TestDatabaseTests {
    @Test(
        "a fresh database URL differs from the admin URL only in its database",
        arguments: [
            ("postgres://u:p@h:5432/postgres?sslmode=disable", "postgres://u:p@h:5432/fresh?sslmode=disable"),
            ("postgresql://u:p@h/postgres", "postgresql://u:p@h/fresh"),
            ("postgres://u:p@h?sslmode=disable", "postgres://u:p@h/fresh?sslmode=disable"),
            ("postgres://h", "postgres://h/fresh"),
            ("host=h dbname=postgres", "host=h dbname=postgres dbname='fresh'"),
        ]
    )
    func freshDatabaseURL(admin: String, expected: String) {
        #expect(TestDatabase.connectionString(admin, database: "fresh") == expected)
    }

    @Test("credentials are replaced in URLs and appended to conninfo")
    func otherCredentials() {
        #expect(
            TestDatabase.connectionString("postgres://a:b@h/db", user: "role", password: "p@ss")
                == "postgres://role:p%40ss@h/db"
        )
        #expect(TestDatabase.connectionString("postgres://h/db", user: "role", password: "pw") == "postgres://role:pw@h/db")
        #expect(
            TestDatabase.connectionString("host=h", user: "role", password: "it's")
                == #"host=h user='role' password='it\'s'"#
        )
    }

    @Test("each test gets its own database, dropped afterwards", integration)
    func freshDatabaseIsDropped() throws {
        let name = try TestDatabase.withFreshConnection { connection in
            try #require(connection.execute("SELECT current_database() AS name")[row: 0, column: "name"])
        }
        #expect(name.hasPrefix("orchestrator_test_"))
        let admin = try PostgresConnection(url: try #require(TestDatabase.adminURL))
        defer { admin.close() }
        let remaining = try admin.execute("SELECT count(*) AS n FROM pg_database WHERE datname = \(name)")
        #expect(remaining.int(0, "n") == 0)
    }
}
