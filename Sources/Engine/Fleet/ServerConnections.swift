import Foundation
import PostgresClient

/// The connections of a fleet run, kept per server and reused from store to store, and the
/// contracts built on each server. A server that refused a connection once is not tried again
/// in this run: its stores are `unreached` at once (a rerun tries again).
final class ServerConnections: @unchecked Sendable {
    private let lock = NSLock()
    private let connectToURL: @Sendable (String) throws -> PostgresConnection
    private var idle: [String: [PostgresConnection]] = [:]
    private var down: [String: Error] = [:]
    private var contractsByServer: [String: ContractCatalogs] = [:]

    init(connect: @escaping @Sendable (String) throws -> PostgresConnection) {
        connectToURL = connect
    }

    func connect(_ url: String) throws -> PostgresConnection {
        try connectToURL(url)
    }

    /// An idle connection to `server`, else a new one.
    func take(_ server: FleetServer) throws -> PostgresConnection {
        let reused: PostgresConnection? = try lock.withLock {
            if let error = down[server.name] { throw error }
            return idle[server.name]?.popLast()
        }
        if let reused { return reused }
        do {
            let connection = try connectToURL(server.connectionString)
            // Kept from store to store: what it learns once about the server is not asked again.
            connection.sessionFacts = SessionFacts()
            return connection
        } catch {
            lock.withLock { down[server.name] = error }
            throw error
        }
    }

    func give(_ connection: PostgresConnection, of server: FleetServer) {
        lock.withLock { idle[server.name, default: []].append(connection) }
    }

    /// After a failure: kept only when the session still answers.
    func giveIfHealthy(_ connection: PostgresConnection, of server: FleetServer) {
        if (try? connection.execute("SELECT 1")) != nil {
            give(connection, of: server)
        } else {
            connection.close()
        }
    }

    func contracts(of server: String) -> ContractCatalogs {
        lock.withLock {
            if let contracts = contractsByServer[server] { return contracts }
            let contracts = ContractCatalogs()
            contractsByServer[server] = contracts
            return contracts
        }
    }

    func closeAll() {
        let all = lock.withLock {
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        all.forEach { $0.close() }
    }
}
