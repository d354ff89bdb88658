import Engine
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

func connect(_ url: String) throws -> PostgresConnection {
    do {
        return try PostgresConnection(url: url)
    } catch let error as PostgresError {
        // redactedConnectionString says "not shown" for a string it cannot read safely.
        throw ConnectionFailure(target: redactedConnectionString(url), underlying: error)
    }
}
