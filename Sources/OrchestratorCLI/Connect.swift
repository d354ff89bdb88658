import Engine
import Foundation
import PostgresClient

/// Connection failed; says where to, without the password.
struct ConnectionFailure: Error, CustomStringConvertible {
    var target: String
    var underlying: PostgresError

    var description: String {
        var text = "cannot connect to \(target): \(underlying.message)"
        if underlying.sqlState == .invalidPassword || underlying.message.contains("password authentication failed") {
            text += " (check the user and password in the database URL)"
        } else if underlying.message.contains("timeout expired") {
            text += " (no answer within connect_timeout, \(ConnectionDefaults.defaultConnectTimeoutSeconds) s unless the URL or PGCONNECT_TIMEOUT sets it)"
        }
        return text
    }
}

/// Opens the command's connection; with `--verbose` it logs every statement. An empty `url`
/// (no `--database-url`, no `DATABASE_URL`) leaves everything to libpq's environment.
/// No statement waits for a lock longer than `lockWait` seconds (`lock_timeout`; migration
/// transactions set a shorter one), and one that waits is named with the lock's holder.
func connect(_ url: String, lockWait: Double) throws -> PostgresConnection {
    do {
        let connection = try PostgresConnection(url: url)
        connection.statementLogger = CommandOutput.statementLogger
        try connection.bound(lockWaits: LockWaitBound(milliseconds: max(1, Int((lockWait * 1000).rounded()))) { wait in
            printNotice("waiting for a lock: \(wait)")
        })
        return connection
    } catch let error as PostgresError {
        // redactedConnectionString says "not shown" for a string it cannot read safely.
        throw ConnectionFailure(target: url.isEmpty ? libpqEnvironmentTarget() : redactedConnectionString(url), underlying: error)
    }
}

/// Where libpq went without a connection string: the PG* variables set (never PGPASSWORD).
func libpqEnvironmentTarget(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    let names = ["PGSERVICE", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSSLMODE"]
    let set = names.compactMap { name in environment[name].flatMap { $0.isEmpty ? nil : "\(name)=\($0)" } }
    let given = set.isEmpty ? "no PG* variables set" : set.joined(separator: " ")
    return "libpq's defaults (no --database-url or DATABASE_URL; \(given))"
}
