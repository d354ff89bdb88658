import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: `apply --subscriber` after a subscriber's step failed (the publisher migrated, the
/// subscription left disabled): the same command run again migrates the subscriber, enables
/// its subscription, and what the publisher wrote meanwhile arrives.
@Suite("apply --subscriber run again after a subscriber failed", .serialized, containers)
struct ReplicationRerunTests {
    @Test("a subscriber whose step failed is migrated by the same apply --subscriber run again; rows written meanwhile arrive")
    func rerunAfterSubscriberFailed() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            let enabled = "SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'"
            // A schema orchestrator did not make, where the subscriber's heavyweight step builds: it refuses to run.
            try subscribing.execute(#"CREATE SCHEMA "kitchen~staging""#)
            let arguments = ["apply", "--model", folder.path, "--subscriber", subscriber.url()]
            let failed = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(failed.exitCode == 1, "\(failed)")
            #expect(failed.stderr.contains("the publisher was migrated, but subscriber "), "\(failed)")
            #expect(try subscribing.execute(SQL(unsafeRaw: enabled)).bool(0, "subenabled") == false)
            try publishing.execute("INSERT INTO kitchen.chef (name) SELECT 'written during' FROM generate_series(1, 3)")

            try subscribing.execute(#"DROP SCHEMA "kitchen~staging""#)
            let again = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(again.exitCode == 0, "\(again)")
            #expect(again.stdoutLines.contains { $0.hasPrefix("subscriber ") && $0.contains(": store kitchen: now at 'Kitchen 2'") }, "\(again)")
            #expect(try subscribing.execute(SQL(unsafeRaw: enabled)).bool(0, "subenabled") == true)
            try ReplicationTests.writeAfterAndConverge(publisher, subscriber, publishing, during: 3)
        }
    }
}
