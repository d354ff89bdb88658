import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 22: the topologies the replication issues need, each server in its own container on
/// its own loopback address, fresh for each test.
@Suite("Topologies in containers", .serialized, containers)
struct ContainerTopologyTests {
    @Test("a store applied on the primary streams to the standby, which stays read-only")
    func primaryAndStandby() throws {
        try Topology.withPrimaryAndStandby { primary, standby in
            #expect(primary.address != standby.address)
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: primary.url())
            #expect(apply.exitCode == 0, "\(apply)")
            let primaryConnection = try PostgresConnection(url: primary.url())
            defer { primaryConnection.close() }
            try primaryConnection.execute("INSERT INTO recipes.recipe (name) SELECT 'recipe ' || i FROM generate_series(1, 500) AS i")
            #expect(try primaryConnection.execute("SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming'").int(0, "n") == 1)

            let seen = Topology.waitFor("500", query: "SELECT count(*) FROM recipes.recipe", on: standby.url())
            #expect(seen == "500")
            let standbyConnection = try PostgresConnection(url: standby.url())
            defer { standbyConnection.close() }
            #expect(try standbyConnection.execute("SELECT pg_is_in_recovery() AS r").bool(0, "r") == true)
            #expect(try standbyConnection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").value(0, "version_name") == "Recipes 3")
            #expect(throws: PostgresError.self) { try standbyConnection.execute("INSERT INTO recipes.recipe (name) VALUES ('x')") }
        }
    }

    @Test("rows written on the publisher reach the subscriber through a subscription")
    func publisherAndSubscriber() throws {
        try Topology.withPublisherAndSubscriber { publisher, subscriber in
            let table: SQL = "CREATE TABLE orders (id bigint PRIMARY KEY, item text NOT NULL)"
            let publishing = try PostgresConnection(url: publisher.url())
            defer { publishing.close() }
            #expect(try publishing.execute("SHOW wal_level").value(0, "wal_level") == "logical")
            try publishing.execute(table)
            try publishing.execute("CREATE PUBLICATION shop FOR TABLE orders")
            try publishing.execute("INSERT INTO orders SELECT i, 'item ' || i FROM generate_series(1, 100) AS i")

            let subscribing = try PostgresConnection(url: subscriber.url())
            defer { subscribing.close() }
            try subscribing.execute(table)
            let connection = try Topology.subscriptionConnection(to: publisher)
            try subscribing.execute(SQL(unsafeRaw: "CREATE SUBSCRIPTION shop CONNECTION \(quoteLiteral(connection)) PUBLICATION shop"))
            #expect(Topology.waitFor("100", query: "SELECT count(*) FROM orders", on: subscriber.url()) == "100")

            try publishing.execute("INSERT INTO orders SELECT i, 'item ' || i FROM generate_series(101, 150) AS i")
            try publishing.execute("UPDATE orders SET item = 'changed' WHERE id <= 10")
            #expect(Topology.waitFor("150", query: "SELECT count(*) FROM orders", on: subscriber.url()) == "150")
            #expect(Topology.waitFor("10", query: "SELECT count(*) FROM orders WHERE item = 'changed'", on: subscriber.url()) == "10")
            try subscribing.execute("DROP SUBSCRIPTION shop")
        }
    }

    @Test("servers of a test are gone after it: no container of the run is left")
    func nothingLeftBehind() throws {
        let runtime = try ContainerRuntime.required()
        var name = ""
        try Topology.withServer { server in
            name = server.name
            #expect(try runtime.run(["inspect", "--format", "{{.State.Status}}", server.name]) == "running")
            try server.pause()
        }
        let listed = try runtime.run(["ps", "--all", "--filter", "name=\(name)", "--format", "{{.Names}}"])
        #expect(listed.isEmpty, "\(listed)")
    }
}
