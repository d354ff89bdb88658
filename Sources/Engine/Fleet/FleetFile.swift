import Foundation
import ObjectModel
import PostgresClient
import Yams

/// A fleet file (docs/fleets.md): the model, the journal, the servers and the stores on each,
/// and the waves. Its keys are a public contract.
public struct FleetFile: Sendable {
    public var path: String
    /// The model path, resolved against the file's folder; nil when the file names none.
    public var model: String?
    /// Where runs are recorded; nil: the first server.
    public var journal: String?
    public var servers: [FleetServer]
    public var waves: [FleetWave]
    /// Stores of one server migrated at once by one worker.
    public var perServerJobs: Int
    /// Failed stores in a wave that stop the later waves.
    public var stopAfterFailures: Int
    /// Seconds a claim outlives a worker that stopped answering (frozen, cut off): the journal
    /// server ends a claim's session idle in its transaction this long; a live worker's
    /// heartbeat keeps it busy.
    public var claimTimeout: Int = FleetFile.defaultClaimTimeout
    /// Seconds a worker waits for stores of a wave that other workers hold without any of
    /// them finishing, before it gives up naming them.
    public var waveWait: Int = FleetFile.defaultWaveWait

    public static let defaultPerServerJobs = 2
    public static let defaultStopAfterFailures = 1
    public static let defaultClaimTimeout = 60
    public static let defaultWaveWait = 3600

    /// The connection string of the journal.
    public var journalURL: String { FleetServer.connectionString(journal ?? servers[0].url) }

    public func server(named name: String) -> FleetServer? {
        servers.first { $0.name == name }
    }
}

public struct FleetServer: Sendable, Hashable {
    public var name: String
    /// A URL, conninfo or service name; never printed as it is (`redactedURL`).
    public var url: String
    /// Glob patterns over schema names; nil: every store the server's metadata knows.
    public var stores: [String]?
    /// The subscribers of this server's stores: `fleet apply` migrates each store with those
    /// whose patterns take it, as `apply --subscriber` does.
    public var subscribers: [FleetSubscriber]
    /// `servers[].subscriberWait`: seconds each wait for a subscriber's subscription may take
    /// (`ReplicatedApply.waitSeconds`, `apply --subscriber-wait`); nil: its default.
    public var subscriberWait: Double?

    public init(name: String, url: String, stores: [String]? = nil, subscribers: [FleetSubscriber] = [], subscriberWait: Double? = nil) {
        self.name = name
        self.url = url
        self.stores = stores
        self.subscribers = subscribers
        self.subscriberWait = subscriberWait
    }

    /// The subscribers that hold `store` (their patterns take it).
    public func subscribers(of store: String) -> [FleetSubscriber] {
        subscribers.filter { subscriber in subscriber.stores.map { patterns in patterns.contains { StorePattern.matches($0, store) } } ?? true }
    }

    /// What libpq is given: a bare name (no `=`, no `://`) is a service name.
    public var connectionString: String { Self.connectionString(url) }

    public var redactedURL: String { redactedConnectionString(connectionString) }

    static func connectionString(_ url: String) -> String {
        url.contains("=") || url.contains("://") || url.isEmpty ? url : "service=\(url)"
    }
}

public struct FleetWave: Sendable, Hashable {
    public enum Stores: Sendable, Hashable {
        /// The next stores in the fleet's stable order (server order, then store name).
        case count(Int)
        /// Named `server/store`.
        case named([String])
        /// Every store no earlier wave took.
        case rest
    }

    public var name: String
    public var stores: Stores
}

/// A mistake in a fleet file: the file, line, column and key it is at.
public struct FleetFileIssue: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// The key's path, e.g. `servers[1].stores`.
    public var key: String?
    public var message: String

    public var description: String {
        var place = file
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        return key.map { "\(place): \($0): \(message)" } ?? "\(place): \(message)"
    }
}

/// The key path a `YAMLReader` reports fleet file issues at.
public struct FleetLocation: YAMLLocation {
    public var key: String?

    public init() {}

    init(key: String?) {
        self.key = key
    }

    public func issue(file: String, line: Int?, column: Int?, message: String) -> FleetFileIssue {
        FleetFileIssue(file: file, line: line, column: column, key: key, message: message)
    }
}

extension FleetFile {
    static let keys: Set<String> = ["model", "journal", "servers", "waves", "perServerJobs", "stopAfterFailures", "claimTimeout", "waveWait"]
    static let serverKeys: Set<String> = ["name", "url", "stores", "subscribers", "subscriberWait"]
    static let subscriberKeys: Set<String> = ["name", "url", "stores"]
    static let waveKeys: Set<String> = ["name", "stores"]

    /// Reads and checks the file at `path`. A password in it never reaches an issue's message:
    /// no message quotes a URL.
    public static func load(path: String) throws -> FleetFile {
        let text = try YAMLReader<FleetLocation>.readText(path)
        let root = try YAMLReader<FleetLocation>.compose(text, file: path)
        return try parse(root, path: path)
    }

    static func parse(_ root: Node, path: String) throws -> FleetFile {
        let reader = YAMLReader<FleetLocation>(file: path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var file = FleetFile(
            path: path, model: nil, journal: nil, servers: [], waves: [],
            perServerJobs: defaultPerServerJobs, stopAfterFailures: defaultStopAfterFailures
        )
        var serversNode: Node?
        for pair in try reader.mapping(root, what: "the fleet file", allowed: keys) {
            let at = reader.at(FleetLocation(key: pair.key))
            switch pair.key {
            case "model":
                let model = try at.nonEmptyString(pair.value, what: "model")
                file.model = model.hasPrefix("/") ? model : folder.appendingPathComponent(model).standardizedFileURL.path
            case "journal":
                file.journal = try at.nonEmptyString(pair.value, what: "journal")
            case "servers":
                serversNode = pair.value
                file.servers = try servers(pair.value, reader: reader)
            case "waves":
                file.waves = try waves(pair.value, reader: reader)
            case "perServerJobs":
                file.perServerJobs = try positive(pair.value, key: pair.key, reader: at)
            case "claimTimeout":
                file.claimTimeout = try positive(pair.value, key: pair.key, reader: at)
            case "waveWait":
                file.waveWait = try positive(pair.value, key: pair.key, reader: at)
            default:
                file.stopAfterFailures = try positive(pair.value, key: pair.key, reader: at)
            }
        }
        guard !file.servers.isEmpty else {
            throw reader.at(FleetLocation(key: "servers")).issue("the fleet file names no server (servers: a list of {name, url, stores})", at: serversNode ?? root)
        }
        return file
    }

    static func positive(_ node: Node, key: String, reader: YAMLReader<FleetLocation>) throws -> Int {
        let value = try reader.int(node, what: key)
        guard value > 0 else { throw reader.issue("\(key) must be at least 1", at: node) }
        return value
    }

    private static func waves(_ node: Node, reader: YAMLReader<FleetLocation>) throws -> [FleetWave] {
        guard let sequence = node.sequence else {
            throw reader.at(FleetLocation(key: "waves")).issue("waves must be a list of {name, stores}", at: node)
        }
        var waves: [FleetWave] = []
        var seen: Set<String> = []
        for (index, item) in sequence.enumerated() {
            let place = "waves[\(index)]"
            var name: String?
            var stores = FleetWave.Stores.rest
            for pair in try reader.at(FleetLocation(key: place)).mapping(item, what: "a wave", allowed: waveKeys) {
                let at = reader.at(FleetLocation(key: "\(place).\(pair.key)"))
                if pair.key == "name" {
                    let value = try at.nonEmptyString(pair.value, what: "name")
                    guard seen.insert(value).inserted else { throw at.issue("duplicate wave name '\(value)'", at: pair.value) }
                    name = value
                } else if let scalar = pair.value.scalar {
                    guard let count = Int(scalar.string), count > 0 else {
                        throw at.issue("stores must be a count of at least 1 or a list of \"server/store\"", at: pair.value)
                    }
                    stores = .count(count)
                } else {
                    let names = try at.strings(pair.value, what: "stores")
                    for named in names where named.split(separator: "/", omittingEmptySubsequences: false).count != 2 {
                        throw at.issue("'\(named)' is not \"server/store\"", at: pair.value)
                    }
                    stores = .named(names)
                }
            }
            guard let name else { throw reader.at(FleetLocation(key: place)).issue("a wave needs a name", at: item) }
            waves.append(FleetWave(name: name, stores: stores))
        }
        return waves
    }
}
