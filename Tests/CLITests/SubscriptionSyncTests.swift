import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: a subscription that has not finished its first copy of the store's tables knows
/// them by oid (its record, origin and slot); a step then would break the copy or make it come
/// again into tables holding the rows. `plan` names it (`subscriptionSyncing`), `apply` on the
/// subscriber alone and `apply --subscriber` on the publisher refuse it; nothing changes on
/// either side.
@Suite("A subscription still making its first copy", .serialized, containers)
struct SubscriptionSyncTests {
    @Test("a subscription created disabled (tables in state i) blocks every migration of its store, on both sides; nothing changed")
    func unfinishedCopyBlocks() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema, enabled: false) { publisher, subscriber, folder, publishing, subscribing in
            let states = "SELECT string_agg(srrelid::regclass::text || ' ' || srsubstate::text, ',' ORDER BY srrelid::regclass::text) AS s FROM pg_subscription_rel"
            try #require(try subscribing.execute(SQL(unsafeRaw: states)).value(0, "s") == "kitchen.chef i,kitchen.recipe i")

            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: subscriber.url())
            let json = try jsonObject(plan.stdout)
            let blockers = json["blockerDetails"] as? [[String: Any]] ?? []
            #expect(blockers.contains { $0["code"] as? String == "subscriptionSyncing" && ($0["message"] as? String ?? "").contains("kitchen.recipe (state i)") }, "\(plan)")
            let subscriptions = (json["replication"] as? [String: Any])?["subscriptions"] as? [[String: Any]] ?? []
            #expect(subscriptions.first?["syncing"] as? [String: String] == ["chef": "i", "recipe": "i"], "\(json)")

            let alone = try OrchestratorBinary.run(["apply", "--model", folder.path, "--allow-subscriber-alone"], databaseURL: subscriber.url())
            #expect(alone.exitCode != 0, "\(alone)")
            #expect(alone.stderr.contains("subscription kitchen has not finished its first copy of kitchen.chef (state i), kitchen.recipe (state i)"), "\(alone)")
            let both = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(both.exitCode != 0, "\(both)")
            #expect(both.stderr.contains("(subscriptionSyncing)"), "\(both)")
            #expect(!both.stderr.contains(subscriber.password) && !both.stdout.contains(subscriber.password))

            // Nothing changed: both stores at Kitchen 1, the records as they were, the subscription still disabled.
            for connection in [publishing, subscribing] {
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            }
            #expect(try subscribing.execute(SQL(unsafeRaw: states)).value(0, "s") == "kitchen.chef i,kitchen.recipe i")
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'").bool(0, "subenabled") == false)
        }
    }
}
