import Foundation
import Testing
@testable import Engine

/// `servers[].subscribers` in a fleet file (issue 24, item 3): each server may name the
/// subscribers of its stores, all of them or those its patterns take; mistakes name the file,
/// line and key, and never quote a password.
@Suite struct FleetSubscriberFileTests {
    func load(_ text: String) throws -> (path: String, result: Result<FleetFile, Error>) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("fleet.yaml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (path, Result { try FleetFile.load(path: path) })
    }

    @Test("a server's subscribers: every store, or the stores their patterns take; a server without them has none")
    func subscribers() throws {
        let file = try load("""
            servers:
              - name: eu-1
                url: postgres://app:s3cret@db-eu-1/app
                subscribers:
                  - {name: replica, url: "postgres://app:s3cret@db-eu-1-sub/app"}
                  - name: warehouse
                    url: warehouse-service
                    stores: ["tenant_a*"]
              - {name: us-1, url: postgres://db-us-1/app}
            """).result.get()
        let server = file.servers[0]
        #expect(server.subscribers.map(\.name) == ["replica", "warehouse"])
        #expect(server.subscribers[1].connectionString == "service=warehouse-service")
        #expect(server.subscribers(of: "tenant_a1").map(\.name) == ["replica", "warehouse"])
        #expect(server.subscribers(of: "tenant_b1").map(\.name) == ["replica"])
        #expect(file.servers[1].subscribers.isEmpty)
        #expect(file.servers[1].subscribers(of: "tenant_a1").isEmpty)
    }

    @Test("subscriberWait: seconds a server's waits for its subscribers take; absent, apply's default")
    func subscriberWait() throws {
        let file = try load("""
            servers:
              - name: a
                url: postgres://a/app
                subscriberWait: 2.5
                subscribers: [{name: s, url: postgres://s/app}]
              - name: b
                url: postgres://b/app
                subscribers: [{name: s, url: postgres://s/app}]
            """).result.get()
        #expect(file.servers[0].subscriberWait == 2.5)
        #expect(file.servers[1].subscriberWait == nil)
    }

    @Test("mistakes in subscribers name the file, the line and the key", arguments: [
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscriberWait: 0\n    subscribers: [{name: s, url: postgres://s/app}]\n",
         ":4:21: servers[0].subscriberWait: subscriberWait must be a number of seconds above 0, at most 86400 (got '0')"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscriberWait: 2m\n    subscribers: [{name: s, url: postgres://s/app}]\n",
         ":4:21: servers[0].subscriberWait: subscriberWait must be a number of seconds above 0, at most 86400 (got '2m')"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscriberWait: [1]\n    subscribers: [{name: s, url: postgres://s/app}]\n",
         ":4:21: servers[0].subscriberWait: subscriberWait must be a number of seconds above 0, at most 86400 (got 'a list or mapping')"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscriberWait: 30\n",
         ":4:21: servers[0].subscriberWait: server 'a' names no subscribers: subscriberWait bounds the waits for them"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers:\n      - {name: s, url: postgres://s/app, port: 5}\n",
         ":5:42: servers[0].subscribers[0]: unknown key 'port' in a subscriber (expected one of: name, stores, url)"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers:\n      - {name: s}\n",
         ":5:9: servers[0].subscribers[0]: subscriber 's' needs a url"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers:\n      - {name: s, url: postgres://s/app}\n      - {name: s, url: postgres://t/app}\n",
         ":6:16: servers[0].subscribers[1].name: duplicate subscriber name 's'"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers: postgres://s/app\n",
         ":4:18: servers[0].subscribers: subscribers must be a list of {name, url, stores}"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers:\n      - {name: s, url: postgres://s/app, stores: [\"t_[\"]}\n",
         ":5:50: servers[0].subscribers[0].stores: bad store pattern 't_[': a '[' is never closed"),
    ])
    func mistakes(text: String, expected: String) throws {
        let (path, result) = try load(text)
        guard case .failure(let error) = result else {
            Issue.record("loaded")
            return
        }
        #expect(String(describing: error) == path + expected)
    }

    @Test("a subscriber's url that cannot be read safely is refused without being quoted")
    func unreadableURL() throws {
        let (_, result) = try load("servers:\n  - name: a\n    url: postgres://a/app\n    subscribers:\n      - {name: s, url: \"postgres://u:pa@ss@host/db\"}\n")
        guard case .failure(let error) = result else {
            Issue.record("loaded")
            return
        }
        let message = String(describing: error)
        #expect(message.hasSuffix(":5:24: servers[0].subscribers[0].url: the url cannot be read as a PostgreSQL URL, conninfo or service name (not shown)"), "\(message)")
        #expect(!message.contains("pa@ss"))
    }
}
