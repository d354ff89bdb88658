import Foundation
import ObjectModel
import PostgresClient
import Yams

/// A subscriber of a fleet server's stores (`servers[].subscribers`): another database holding
/// the same stores, written by logical replication from the server.
public struct FleetSubscriber: Sendable, Hashable {
    /// Its name in output and errors (its address is never printed).
    public var name: String
    /// A URL, conninfo or service name, as a server's.
    public var url: String
    /// Glob patterns over the server's stores this subscriber holds; nil: every one.
    public var stores: [String]?

    public init(name: String, url: String, stores: [String]? = nil) {
        self.name = name
        self.url = url
        self.stores = stores
    }

    /// What libpq is given (a bare name is a service name).
    public var connectionString: String { FleetServer.connectionString(url) }
}

extension FleetFile {
    static func servers(_ node: Node, reader: YAMLReader<FleetLocation>) throws -> [FleetServer] {
        guard let sequence = node.sequence else {
            throw reader.at(FleetLocation(key: "servers")).issue("servers must be a list of {name, url, stores}", at: node)
        }
        var servers: [FleetServer] = []
        var seen: Set<String> = []
        for (index, item) in sequence.enumerated() {
            let place = "servers[\(index)]"
            var name: String?
            var url: String?
            var stores: [String]?
            var subscribers: [FleetSubscriber] = []
            var subscriberWait: (seconds: Double, node: Node)?
            for pair in try reader.at(FleetLocation(key: place)).mapping(item, what: "a server", allowed: serverKeys) {
                let at = reader.at(FleetLocation(key: "\(place).\(pair.key)"))
                switch pair.key {
                case "name":
                    let value = try at.nonEmptyString(pair.value, what: "name")
                    guard !value.contains("/") else { throw at.issue("a server's name cannot contain '/' (waves name stores as server/store)", at: pair.value) }
                    guard seen.insert(value).inserted else { throw at.issue("duplicate server name '\(value)'", at: pair.value) }
                    name = value
                case "url":
                    url = try connectionURL(pair.value, reader: at)
                case "stores":
                    stores = try storePatterns(pair.value, reader: at)
                case "subscribers":
                    subscribers = try self.subscribers(pair.value, place: "\(place).subscribers", reader: reader)
                case "subscriberWait":
                    subscriberWait = (try seconds(pair.value, key: pair.key, reader: at), pair.value)
                default:
                    break
                }
            }
            let at = reader.at(FleetLocation(key: place))
            guard let name else { throw at.issue("a server needs a name", at: item) }
            guard let url else { throw at.issue("server '\(name)' needs a url", at: item) }
            if let subscriberWait, subscribers.isEmpty {
                throw reader.at(FleetLocation(key: "\(place).subscriberWait")).issue("server '\(name)' names no subscribers: subscriberWait bounds the waits for them", at: subscriberWait.node)
            }
            servers.append(FleetServer(name: name, url: url, stores: stores, subscribers: subscribers, subscriberWait: subscriberWait?.seconds))
        }
        return servers
    }

    /// `servers[i].subscribers`: a list of `{name, url, stores}`, names unique in the server.
    private static func subscribers(_ node: Node, place: String, reader: YAMLReader<FleetLocation>) throws -> [FleetSubscriber] {
        guard let sequence = node.sequence else {
            throw reader.at(FleetLocation(key: place)).issue("subscribers must be a list of {name, url, stores}", at: node)
        }
        var subscribers: [FleetSubscriber] = []
        var seen: Set<String> = []
        for (index, item) in sequence.enumerated() {
            let here = "\(place)[\(index)]"
            var name: String?
            var url: String?
            var stores: [String]?
            for pair in try reader.at(FleetLocation(key: here)).mapping(item, what: "a subscriber", allowed: subscriberKeys) {
                let at = reader.at(FleetLocation(key: "\(here).\(pair.key)"))
                switch pair.key {
                case "name":
                    let value = try at.nonEmptyString(pair.value, what: "name")
                    guard seen.insert(value).inserted else { throw at.issue("duplicate subscriber name '\(value)'", at: pair.value) }
                    name = value
                case "url":
                    url = try connectionURL(pair.value, reader: at)
                default:
                    stores = try storePatterns(pair.value, reader: at)
                }
            }
            let at = reader.at(FleetLocation(key: here))
            guard let name else { throw at.issue("a subscriber needs a name", at: item) }
            guard let url else { throw at.issue("subscriber '\(name)' needs a url", at: item) }
            subscribers.append(FleetSubscriber(name: name, url: url, stores: stores))
        }
        return subscribers
    }

    /// A number of seconds above 0 (`1.5` too), at most a day: a wait's bound.
    private static func seconds(_ node: Node, key: String, reader at: YAMLReader<FleetLocation>) throws -> Double {
        guard let text = node.scalar?.string, let value = Double(text), value.isFinite, value > 0, value <= 86_400 else {
            throw at.issue("\(key) must be a number of seconds above 0, at most 86400 (got '\(node.scalar?.string ?? "a list or mapping")')", at: node)
        }
        return value
    }

    /// A `url`: checked for safe redaction now, so no later message can print a secret.
    private static func connectionURL(_ node: Node, reader at: YAMLReader<FleetLocation>) throws -> String {
        let value = try at.string(node, what: "url")
        if case .failure = Result(catching: { try ConnectionString(FleetServer.connectionString(value)) }) {
            throw at.issue("the url cannot be read as a PostgreSQL URL, conninfo or service name (not shown)", at: node)
        }
        return value
    }

    /// A `stores` list of glob patterns, each usable.
    private static func storePatterns(_ node: Node, reader at: YAMLReader<FleetLocation>) throws -> [String] {
        let patterns = try at.strings(node, what: "stores")
        for pattern in patterns {
            if let problem = StorePattern.problem(pattern) {
                throw at.issue("bad store pattern '\(pattern)': \(problem)", at: node)
            }
        }
        return patterns
    }
}
