import Foundation
import Testing
@testable import Engine

/// The fleet file: its keys, and every mistake named by file, line and key, without a password.
@Suite struct FleetFileTests {
    func write(_ text: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("fleet.yaml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func message(_ text: String) throws -> (path: String, message: String) {
        let path = try write(text)
        do {
            _ = try FleetFile.load(path: path)
            return (path, "loaded")
        } catch {
            return (path, String(describing: error))
        }
    }

    @Test("every key is read: model relative to the file, servers with patterns, waves by count, by name and the rest")
    func everyKey() throws {
        let path = try write("""
            model: ../Model.xcdatamodeld
            journal: postgres://ops@journal/ops
            servers:
              - name: eu-1
                url: postgres://app:s3cret@db-eu-1/app
                stores: ["tenant_*", "shared"]
              - {name: us-1, url: "host=db-us-1 dbname=app"}
              - {name: asia, url: asia-service}
            waves:
              - {name: canary, stores: 10}
              - {name: pick, stores: ["us-1/tenant_9"]}
              - {name: rest}
            perServerJobs: 3
            stopAfterFailures: 2
            """)
        let file = try FleetFile.load(path: path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent()
        #expect(file.model == folder.appendingPathComponent("Model.xcdatamodeld").path)
        #expect(file.journalURL == "postgres://ops@journal/ops")
        #expect(file.servers.map(\.name) == ["eu-1", "us-1", "asia"])
        #expect(file.servers[0].stores == ["tenant_*", "shared"])
        #expect(file.servers[1].stores == nil)
        #expect(file.servers[2].connectionString == "service=asia-service")
        #expect(file.servers[0].redactedURL.contains("s3cret") == false)
        #expect(file.waves == [FleetWave(name: "canary", stores: .count(10)), FleetWave(name: "pick", stores: .named(["us-1/tenant_9"])), FleetWave(name: "rest", stores: .rest)])
        #expect(file.perServerJobs == 3)
        #expect(file.stopAfterFailures == 2)
    }

    @Test("defaults: the journal is the first server, two jobs per server, one failure stops the waves")
    func defaults() throws {
        let file = try FleetFile.load(path: try write("servers:\n  - {name: a, url: postgres://a/app}\n"))
        #expect(file.journalURL == "postgres://a/app")
        #expect(file.perServerJobs == 2)
        #expect(file.stopAfterFailures == 1)
        #expect(file.model == nil)
    }

    @Test("mistakes name the file, the line and the key", arguments: [
        ("servers:\n  - {name: a, url: postgres://a/app}\nwavez: []\n", ":3:1: unknown key 'wavez' in the fleet file (expected one of: claimTimeout, journal, model, perServerJobs, servers, stopAfterFailures, waveWait, waves)"),
        ("servers:\n  - {name: a, url: postgres://a/app, port: 5}\n", ":2:38: servers[0]: unknown key 'port' in a server (expected one of: name, stores, subscriberWait, subscribers, url)"),
        ("servers:\n  - {name: a, url: postgres://a/app}\n  - {name: a, url: postgres://b/app}\n", ":3:12: servers[1].name: duplicate server name 'a'"),
        ("servers:\n  - name: a\n    url: postgres://a/app\n    stores: [\"tenant_[ab\"]\n", ":4:13: servers[0].stores: bad store pattern 'tenant_[ab': a '[' is never closed"),
        ("servers:\n  - {name: a, url: postgres://a/app}\nperServerJobs: 0\n", ":3:16: perServerJobs: perServerJobs must be at least 1"),
        ("servers:\n  - {name: a, url: postgres://a/app}\nwaves:\n  - {name: w, stores: [a]}\n", ":4:23: waves[0].stores: 'a' is not \"server/store\""),
        ("servers: []\n", ":1:10: servers: the fleet file names no server (servers: a list of {name, url, stores})"),
        ("servers:\n  - {name: a}\n", ":2:5: servers[0]: server 'a' needs a url"),
    ])
    func mistakes(text: String, expected: String) throws {
        let (path, message) = try message(text)
        #expect(message == path + expected)
    }

    @Test("a url that cannot be read safely is refused without being quoted")
    func unreadableURL() throws {
        let (path, message) = try message("servers:\n  - {name: a, url: \"postgres://u:pa@ss@host/db\"}\n")
        #expect(message == path + ":2:20: servers[0].url: the url cannot be read as a PostgreSQL URL, conninfo or service name (not shown)")
        #expect(!message.contains("pa@ss"))
    }

    @Test("a file that cannot be read is named")
    func unreadableFile() {
        #expect(throws: FleetFileIssue.self) { try FleetFile.load(path: "/nonexistent/fleet.yaml") }
    }

    @Test("waves take counts in the stable order, named stores, the rest; stores left over make a last wave")
    func waves() throws {
        let states = ["a/t1", "a/t2", "b/t1", "b/t2"].map {
            let parts = $0.split(separator: "/").map(String.init)
            return FleetStoreState(store: FleetStore(server: parts[0], store: parts[1]), status: .migrationRequired)
        }
        let assignment = try FleetWaves.assign(states, waves: [FleetWave(name: "canary", stores: .count(1)), FleetWave(name: "b", stores: .named(["b/t2"]))], file: "f.yaml")
        #expect(assignment.names == ["canary", "b", "rest"])
        #expect(assignment.order.map { "\(states[$0.index].store)@\($0.wave)" } == ["a/t1@0", "b/t2@1", "a/t2@2", "b/t1@2"])
        #expect(throws: FleetFileIssue.self) {
            try FleetWaves.assign(states, waves: [FleetWave(name: "x", stores: .named(["c/t1"]))], file: "f.yaml")
        }
    }
}
