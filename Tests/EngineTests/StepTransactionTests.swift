import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import Testing
import TestSupport
@testable import Engine

/// A lightweight step's transaction runs in two round trips (`StepTransaction`): BEGIN, the
/// timeouts, its statements and the metadata in one pipeline; the history row and COMMIT in a
/// second. A failure anywhere rolls all of it back and names the failing statement.
@Suite(integration) struct StepTransactionTests {
    typealias S = MigratedStore

    /// v2 renames notes to remarks and makes rating non-optional with a default: a rename, then
    /// a backfill of the NULLs.
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Product: {attributes: {name: {type: string, optional: false}, notes: string, rating: int32}}")),
            ("v2", S.version("Product: {attributes: {name: {type: string, optional: false}, remarks: {type: string, renamingIdentifier: notes}, rating: {type: int32, optional: false, default: 0}}}")),
        ])
    }

    @Test("the step's statements, the metadata, the history and COMMIT go in two round trips, and leave the store at its new version")
    func twoRoundTrips() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 30) { connection in
            try connection.execute("UPDATE \(ident: S.store, "product") SET rating = NULL WHERE _pk % 3 = 0")
            let nulls = try #require(try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "product") WHERE rating IS NULL").int(0, "n"))
            #expect(nulls > 0)
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            let plan = try migrator.plan()
            let step = try #require(plan.steps.first)
            #expect(plan.steps.count == 1 && step.statements.count >= 3)
            let before = connection.roundTrips
            let rows = try StepTransaction(migrator: migrator, step: step, plan: plan, started: Date()).run(under: ApplyOptions().executionPolicy)
            #expect(connection.roundTrips - before == 2)
            #expect(rows == Int(nulls))
            #expect(try S.version(on: connection) == "v2")
            let history = try connection.execute("SELECT rows, outcome FROM orchestrator.migrations WHERE store = \(S.store) AND to_version = 'v2'")
            #expect(history.rows == [[String(nulls), "succeeded"]])
            #expect(try S.rows("product", ["remarks"], where: "rating = 0", on: connection).count == Int(nulls))
        }
    }

    @Test("a statement that fails in the pipeline is named by the step's failure, and the whole step rolls back")
    func failureRollsBackTheWholeStep() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 30) { connection in
            try connection.execute("UPDATE \(ident: S.store, "product") SET rating = NULL WHERE _pk % 3 = 0")
            // Made by hand beside the contract: the backfill to 0 breaks it.
            try connection.execute("ALTER TABLE \(ident: S.store, "product") ADD CONSTRAINT no_zero CHECK (rating IS NULL OR rating <> 0)")
            let failure = try #require(#expect(throws: StepFailure.self) { try S.migrate(model, on: connection) })
            #expect(failure.statement?.sql.text.hasPrefix("UPDATE \"shop\".\"product\" SET \"rating\" = 0") == true, "\(failure)")
            #expect((failure.underlying as? PostgresError)?.sqlState == .checkViolation, "\(failure)")
            #expect(try S.version(on: connection) == "v1")
            // The rename before the failing statement was rolled back with it.
            let columns = try connection.execute("""
                SELECT string_agg(column_name, ',' ORDER BY column_name) AS c FROM information_schema.columns WHERE table_schema = \(S.store) AND table_name = 'product'
                """).value(0, "c")
            #expect(columns == "_entity,_pk,name,notes,rating")
            #expect(try S.rows("product", ["name"], on: connection).count == 30)
            let history = try connection.execute("SELECT outcome FROM orchestrator.migrations WHERE store = \(S.store) AND to_version = 'v2'")
            #expect(history.rows == [["failed"]])
            // The session is usable: the step runs once the constraint is gone, and its history
            // records the rows the backfill changed (read from the first pipeline's results).
            try connection.execute("ALTER TABLE \(ident: S.store, "product") DROP CONSTRAINT no_zero")
            let nulls = try #require(try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "product") WHERE rating IS NULL").int(0, "n"))
            #expect(nulls > 0)
            try S.migrate(model, on: connection)
            #expect(try S.version(on: connection) == "v2")
            let succeeded = try connection.execute("SELECT rows FROM orchestrator.migrations WHERE store = \(S.store) AND to_version = 'v2' AND outcome = 'succeeded'")
            #expect(succeeded.rows == [[String(nulls)]])
            #expect(try S.rows("product", ["remarks"], where: "rating = 0", on: connection).count == Int(nulls))
        }
    }
}
