import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 11.10: without --database-url and DATABASE_URL, libpq's environment decides where to
/// connect, as for psql; every session shows as `orchestrator` in pg_stat_activity unless the
/// user names another application.
@Suite("Connections the libpq way")
struct LibpqEnvironmentTests {
    @Test("with only PGHOST, PGPORT, PGUSER and PGDATABASE set, apply creates the store and status finds it compatible", integration)
    func onlyPGVariables() throws {
        try TestDatabase.withFreshDatabase { url in
            let environment = try libpqVariables(reaching: url)
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: nil, environment: environment, clearingLibpqVariables: true)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last?.hasPrefix("store recipes: now at 'Recipes 3' (1 step(s), ") == true, "\(apply)")
            let status = try OrchestratorBinary.run(
                ["status", "--model", "migrations", "--format", "json"], databaseURL: nil, environment: environment, clearingLibpqVariables: true
            )
            #expect(status.exitCode == 0, "\(status)")
            let json = try jsonObject(status.stdout)
            #expect(json["compatible"] as? Bool == true, "\(status)")
            #expect(json["storeVersion"] as? String == "Recipes 3", "\(status)")
        }
    }

    @Test("PGSSLMODE is libpq's: verify-full without a root certificate refuses to connect, naming SSL", integration)
    func sslModeFromEnvironment() throws {
        try TestDatabase.withFreshDatabase { url in
            var environment = try libpqVariables(reaching: url)
            environment["PGSSLMODE"] = "verify-full"
            environment["PGSSLROOTCERT"] = "/nonexistent/orchestrator-root.crt"
            let result = try OrchestratorBinary.run(["status", "--model", "migrations"], databaseURL: nil, environment: environment, clearingLibpqVariables: true)
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.hasPrefix("error: cannot connect to libpq's defaults (no --database-url or DATABASE_URL; PGHOST="), "\(result)")
            #expect(result.stderr.contains("PGSSLMODE=verify-full"), "\(result)")
            // Without SSL on the server: "does not support SSL"; with it: the missing root certificate.
            #expect(result.stderr.contains("SSL") || result.stderr.contains("root certificate"), "\(result)")
        }
    }

    @Test("PGSERVICE names a service of PGSERVICEFILE, and that is where the store is made", integration)
    func serviceFile() throws {
        try TestDatabase.withFreshDatabase { url in
            try withTemporaryFolder { folder in
                let variables = try libpqVariables(reaching: url)
                let service = """
                    [orchestrator-test]
                    host=\(variables["PGHOST"]!)
                    port=\(variables["PGPORT"]!)
                    user=\(variables["PGUSER"]!)
                    dbname=\(variables["PGDATABASE"]!)
                    \(variables["PGPASSWORD"].map { "password=\($0)" } ?? "")

                    """
                let file = try write(service, to: "pg_service.conf", in: folder)
                let result = try OrchestratorBinary.run(
                    ["apply", "--model", "migrations"], databaseURL: nil,
                    environment: ["PGSERVICEFILE": file.path, "PGSERVICE": "orchestrator-test"], clearingLibpqVariables: true
                )
                #expect(result.exitCode == 0, "\(result)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                #expect(try connection.execute("SELECT count(*) AS n FROM recipes.recipe").int(0, "n") == 0)
            }
        }
    }

    @Test("while apply waits for the store's lock, pg_stat_activity shows its session as orchestrator", integration)
    func applicationNameByDefault() throws {
        try TestDatabase.withFreshDatabase { url in
            let name = try applicationNameOfWaitingApply(url: url, environment: [:])
            #expect(name == "orchestrator")
        }
    }

    @Test("the user's own application_name wins: PGAPPNAME, and application_name in the URL", integration)
    func applicationNameOfTheUser() throws {
        try TestDatabase.withFreshDatabase { url in
            let fromEnvironment = try applicationNameOfWaitingApply(url: url, environment: ["PGAPPNAME": "deploy-bot"])
            #expect(fromEnvironment == "deploy-bot")
            let separator = url.contains("://") ? (url.contains("?") ? "&" : "?") : " "
            let fromURL = try applicationNameOfWaitingApply(url: url + separator + "application_name=nightly-job", environment: [:])
            #expect(fromURL == "nightly-job")
        }
    }
}

/// PGHOST, PGPORT, PGUSER and PGDATABASE that reach the database of `url`: the URL's host and
/// port when it has them (a server in a container knows only its own address, not the one
/// published on the host), else as the server reports them (a socket directory when the test
/// connects through one).
private func libpqVariables(reaching url: String) throws -> [String: String] {
    let connection = try PostgresConnection(url: url)
    defer { connection.close() }
    let row = try connection.execute("""
        SELECT current_database() AS database, current_user AS user_name, current_setting('port') AS port,
               coalesce(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1)) AS host
        """)
    var variables = [
        "PGHOST": try #require(row.value(0, "host")),
        "PGPORT": try #require(row.value(0, "port")),
        "PGUSER": try #require(row.value(0, "user_name")),
        "PGDATABASE": try #require(row.value(0, "database")),
    ]
    if let components = URLComponents(string: url), let host = components.host, !host.isEmpty {
        variables["PGHOST"] = host
        variables["PGPORT"] = components.port.map(String.init) ?? "5432"
    }
    // A server that checks passwords (make test's throwaway one) needs the URL's password too,
    // given the libpq way.
    if let password = URLComponents(string: url)?.password, !password.isEmpty {
        variables["PGPASSWORD"] = password
    }
    return variables
}

/// Starts `apply` while this test holds the store's advisory lock, reads the application_name
/// of the session waiting for it from pg_stat_activity, then lets apply finish (exit 0).
private func applicationNameOfWaitingApply(url: String, environment: [String: String]) throws -> String? {
    let holder = try PostgresConnection(url: url)
    defer { holder.close() }
    let store = "recipes_\(UInt32.random(in: 0 ... .max))"
    let key = PostgresConnection.advisoryLockKey(for: "orchestrator:store:" + store)
    try holder.execute("SELECT pg_advisory_lock(\(key))")
    let apply = try RunningOrchestrator(
        ["apply", "--model", "migrations", "--store", store, "--lock-wait", "60"], databaseURL: url, environment: environment
    )
    var name: String?
    let deadline = Date().addingTimeInterval(30)
    while name == nil, Date() < deadline, apply.isRunning {
        name = try holder.execute("""
            SELECT application_name FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """).rows.first?.first ?? nil
        if name == nil { Thread.sleep(forTimeInterval: 0.05) }
    }
    try holder.execute("SELECT pg_advisory_unlock(\(key))")
    let result = try apply.finish(killingAfter: 60)
    #expect(result.exitCode == 0, "\(result)")
    #expect(try holder.execute("SELECT count(*) AS n FROM \(ident: store).recipe").int(0, "n") == 0)
    return name
}
