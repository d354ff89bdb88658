import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: `apply --subscriber` after a subscriber's step failed (the publisher migrated, the
/// subscription left disabled): the same command run again migrates the subscriber, enables
/// its subscription, and what the publisher wrote meanwhile arrives. A subscriber whose step
/// `apply` would refuse is refused before anything changes, on any side.
@Suite("apply --subscriber run again after a subscriber failed", .serialized, containers)
struct ReplicationRerunTests {
    static let enabled: SQL = "SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'"

    @Test("a subscriber whose step failed is migrated by the same apply --subscriber run again; rows written meanwhile arrive")
    func rerunAfterSubscriberFailed() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            // A session on the subscriber holding its chefs against the step's locks (ROW
            // EXCLUSIVE lets the subscription's worker write, not the step take its locks): no
            // plan can see it, so the subscriber's step fails after the publisher's, its lock
            // requests timing out.
            let holder = try PostgresConnection(url: subscriber.url())
            defer { holder.close() }
            try holder.execute("BEGIN")
            try holder.execute("LOCK TABLE kitchen.chef IN ROW EXCLUSIVE MODE")
            let arguments = ["apply", "--model", folder.path, "--subscriber", subscriber.url()]
            let failed = try OrchestratorBinary.run(arguments + ["--lock-timeout", "100"], databaseURL: publisher.url())
            #expect(failed.exitCode == 1, "\(failed)")
            #expect(failed.stderr.contains("the publisher was migrated, but subscriber "), "\(failed)")
            #expect(failed.stderr.contains("lock timeout"), "\(failed)")
            #expect(try publishing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")
            #expect(try subscribing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            #expect(try subscribing.execute(Self.enabled).bool(0, "subenabled") == false)
            try publishing.execute("INSERT INTO kitchen.chef (name) SELECT 'written during' FROM generate_series(1, 3)")

            try holder.execute("ROLLBACK")
            let again = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(again.exitCode == 0, "\(again)")
            #expect(again.stdoutLines.contains { $0.hasPrefix("subscriber ") && $0.contains(": store kitchen: now at 'Kitchen 2'") }, "\(again)")
            #expect(try subscribing.execute(Self.enabled).bool(0, "subenabled") == true)
            try ReplicationTests.writeAfterAndConverge(publisher, subscriber, publishing, during: 3)
        }
    }

    @Test("a subscriber whose plan has blockers (a foreign <store>~staging schema, a view on its tables) is refused before anything changes; rows keep flowing")
    func subscriberBlockersRefusedUpFront() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            // A schema orchestrator did not make, where the subscriber's heavyweight step would
            // build, and a view the new tables could not take over.
            try subscribing.execute(#"CREATE SCHEMA "kitchen~staging""#)
            try subscribing.execute("CREATE VIEW public.chef_names AS SELECT name FROM kitchen.chef")
            let refused = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(refused.exitCode == 1, "\(refused)")
            let named = "subscriber \(redactedConnectionString(subscriber.url())) cannot migrate (foreignSchema): "
            #expect(refused.stderr.contains(named), "\(refused)")
            #expect(refused.stderr.contains("(dependentObjects): view chef_names on kitchen.chef"), "\(refused)")
            #expect(refused.stderr.contains("nothing was changed on any side"), "\(refused)")
            #expect(!refused.stderr.contains(subscriber.password) && !refused.stdout.contains(subscriber.password))

            // Nothing changed: both stores at Kitchen 1, no history of a step, the publication
            // as it was, the subscription enabled; rows written now arrive.
            for connection in [publishing, subscribing] {
                let state = try connection.execute("""
                    SELECT (SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen') AS version,
                           (SELECT count(*) FROM orchestrator.migrations WHERE store = 'kitchen' AND from_version IS NOT NULL) AS steps
                    """)
                #expect(state.value(0, "version") == "Kitchen 1")
                #expect(state.int(0, "steps") == 0)
            }
            let published = try publishing.execute("SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY tablename) AS t FROM pg_publication_tables")
            #expect(published.value(0, "t") == "kitchen.chef,kitchen.recipe")
            #expect(try subscribing.execute(Self.enabled).bool(0, "subenabled") == true)
            try publishing.execute("INSERT INTO kitchen.chef (name) SELECT 'written after the refusal' FROM generate_series(1, 4)")
            try publishing.execute("UPDATE kitchen.recipe SET amount = amount + 1 WHERE _pk <= 10")
            #expect(try ReplicationTests.converge(publisher, subscriber), "rows written at the publisher never reached the subscriber")
            #expect(try subscribing.execute("SELECT count(*) AS n FROM kitchen.chef WHERE name = 'written after the refusal'").int(0, "n") == 4)
        }
    }
}
