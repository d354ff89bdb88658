import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24, item 3 in a fleet file: a server names the subscriber of its stores, and `fleet
/// apply` migrates each store with it as `apply --subscriber` does; rows written at the
/// publisher before, during and after the migration all reach the subscriber.
@Suite("fleet apply with a server's subscribers", .serialized, containers)
struct FleetSubscriberTests {
    /// A fleet file in `folder`: the publisher's store kitchen, with `subscribers` (YAML).
    static func writeFleet(in folder: URL, publisher: String, subscribers: String) throws -> String {
        let fleet = folder.appendingPathComponent("fleet.yaml").path
        let text = "servers:\n  - name: pub\n    url: \"\(publisher)\"\n    stores: [\"kitchen\"]\n    subscribers: \(subscribers)\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: fleet))
        return fleet
    }

    @Test("fleet apply migrates a publisher's store and its subscriber's together; every row written at the publisher arrives")
    func publisherAndSubscriber() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            let fleet = try Self.writeFleet(in: folder, publisher: publisher.url(), subscribers: "[{name: sub, url: \"\(subscriber.url())\", stores: [\"kitchen\"]}]")
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO kitchen.chef (name) VALUES ('written during')")
            let apply = try OrchestratorBinary.run(["fleet", "apply", "--fleet", fleet, "--model", folder.path, "--run", "replicated"], databaseURL: nil)
            let written = try writer.stopCounting()
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.hasPrefix("run replicated: 1 store") && $0.contains("1 migrated") }, "\(apply)")
            #expect(!apply.stdout.contains(publisher.password) && !apply.stderr.contains(subscriber.password))
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'").bool(0, "subenabled") == true)
            try ReplicationTests.writeAfterAndConverge(publisher, subscriber, publishing, during: written)
        }
    }

    @Test("a subscriber that cannot be reached fails its stores, naming it, with nothing changed on the publisher")
    func unreachableSubscriber() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, _, folder, publishing, _ in
            let fleet = try Self.writeFleet(in: folder, publisher: publisher.url(), subscribers: "[{name: gone, url: \"postgresql://postgres:secret@127.0.0.1:1/postgres\"}]")
            let apply = try OrchestratorBinary.run(["fleet", "apply", "--fleet", fleet, "--model", folder.path, "--run", "unreached"], databaseURL: nil)
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stdout.contains("subscriber gone of server pub could not be reached"), "\(apply)")
            #expect(!apply.stdout.contains("secret") && !apply.stderr.contains("secret"))
            #expect(try publishing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
        }
    }
}
