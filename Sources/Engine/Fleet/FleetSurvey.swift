import Foundation
import ObjectModel
import PostgresClient

/// Every store of every server of a fleet, one `ServerSurvey` per server, the servers read at
/// once (a server that does not answer costs its connect timeout, not the others').
public enum FleetSurvey {
    /// The states in the fleet's stable order: servers as the file lists them, stores by name.
    /// A server that cannot be reached shows one `unreachable` entry per store pattern (`*`
    /// when it has none): which stores it holds is not known.
    /// With `fingerprints` (`fleet apply`), stores without blocking drift carry their catalog's
    /// fingerprint (`ServerSurvey.readsFingerprints`).
    public static func states(
        of fleet: FleetFile, model: VersionedModel, target: ModelVersion, fingerprints: Bool = false,
        connect: @escaping @Sendable (FleetServer) throws -> PostgresConnection
    ) -> [FleetStoreState] {
        let results = ResultSlots<[FleetStoreState]>(count: fleet.servers.count)
        DispatchQueue.concurrentPerform(iterations: fleet.servers.count) { index in
            let server = fleet.servers[index]
            do {
                let connection = try connect(server)
                defer { connection.close() }
                var survey = ServerSurvey(server: server, connection: connection, model: model, target: target) { try connect(server) }
                survey.readsFingerprints = fingerprints
                results.set(index, try survey.states())
            } catch {
                let reason = ServerUnreachable(server: server.name, reason: describe(error, server: server)).description
                results.set(index, (server.stores ?? ["*"]).map {
                    FleetStoreState(store: FleetStore(server: server.name, store: $0), status: .unreachable, detail: reason)
                })
            }
        }
        return results.values.flatMap { $0 ?? [] }
    }

    /// A connection's error with the server's redacted address; any other error as it is.
    public static func describe(_ error: Error, server: FleetServer) -> String {
        guard let error = error as? PostgresError, error.kind == .connection else { return String(describing: error) }
        return "cannot connect to \(server.redactedURL): \(error.message)"
    }
}

/// Results written by concurrent workers, each to its own slot.
final class ResultSlots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ value: Value) {
        lock.withLock { slots[index] = value }
    }

    var values: [Value?] { lock.withLock { slots } }
}
