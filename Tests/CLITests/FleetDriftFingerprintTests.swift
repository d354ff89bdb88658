import Engine
import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet apply`'s survey reads each store's catalog once (per server, in bulk) with its
/// fingerprint; under the store's lock the fingerprint is compared instead of reading the
/// catalog again, and a store changed since the survey gets the full drift check.
@Suite("fleet apply: the drift check under the lock by fingerprint")
struct FleetDriftFingerprintTests {
    @Test("a store's drift under its lock is one fingerprint statement: no catalog read, no contract transaction", integration)
    func noCatalogReadUnderTheLock() throws {
        let reference = try FleetFixture.referenceContents(from: "Recipes 1")
        try FleetFixture.withServers(2) { urls in
            for (index, url) in urls.enumerated() {
                try FleetFixture.makeStores(["tenant_\(index)_a", "tenant_\(index)_b"], at: "Recipes 1", url: url)
            }
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) })
            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "prints", "--jobs", "1", "--verbose"])
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last == "run prints: 4 stores: 4 migrated", "\(apply)")
            let statements = apply.stderrLines.filter { $0.hasPrefix("sql: ") }
            // The drift check's transaction sets its lock timeout in its first statement.
            #expect(statements.filter { $0.contains("set_config('lock_timeout', $1, true) AS lock_timeout") }.isEmpty, "\(apply)")
            // One fingerprint per server in the survey, one per store under its lock.
            #expect(statements.filter { $0.hasSuffix(": WITH r AS MATERIALIZED (") }.count == 2 + 4, "\(apply)")
            for (index, url) in urls.enumerated() {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                for store in ["tenant_\(index)_a", "tenant_\(index)_b"] {
                    let contents = try FleetFixture.contents(of: store, on: connection).map { $0.replacingOccurrences(of: store, with: "reference") }
                    #expect(contents == reference, "\(store)")
                }
            }
        }
    }

    @Test("a store made to drift after the survey is refused under its lock with the drift, unchanged; the others migrate", integration)
    func driftAfterTheSurveyIsRefused() throws {
        try FleetFixture.withServers(1) { urls in
            let run = try FleetFixture.lateChangeRun("late", url: urls[0])
            let handChange = ResultBox()
            // After the survey and before any claim: the column the step renames is dropped.
            run.onStart = { _ in
                handChange.record {
                    let connection = try PostgresConnection(url: urls[0])
                    defer { connection.close() }
                    try connection.execute("ALTER TABLE tenant_a.recipe DROP COLUMN instructions")
                }
            }
            let outcomes = try run.execute()
            #expect(handChange.error == nil, "\(handChange.error.map { "\($0)" } ?? "")")
            let failed = try #require(outcomes.first { $0.store.store == "tenant_a" })
            #expect(failed.kind == .failed)
            #expect(failed.error?.contains("store tenant_a differs from the contract of its version 'Recipes 1'") == true, "\(failed)")
            #expect(failed.error?.contains("recipe.instructions") == true, "\(failed)")
            #expect(outcomes.first { $0.store.store == "tenant_b" }?.kind == .migrated)
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_a'").value(0, "version_name") == "Recipes 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM tenant_a.recipe").value(0, "n") == "3")
        }
    }
}

/// An error thrown in a callback, kept for the test to look at.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: Error?

    var error: Error? { lock.withLock { recorded } }

    func record(_ body: () throws -> Void) {
        do { try body() } catch { lock.withLock { recorded = error } }
    }
}
