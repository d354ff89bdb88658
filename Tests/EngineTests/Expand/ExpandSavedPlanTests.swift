import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `plan --expand --out FILE`, then `apply --expand --plan FILE`: the saved plan runs the
/// expansion (views, deferred drops), and a plan saved in another mode than the apply's flags
/// is refused naming both, with nothing changed.
@Suite(integration) struct ExpandSavedPlanTests {
    typealias S = MigratedStore

    static func saved(_ model: VersionedModel, mode: PlanMode, on connection: PostgresConnection) throws -> ExpectedPlan {
        let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
        let plan = try migrator.plan(mode: mode)
        let saved = try SavedPlan(plan: plan, migrator: migrator, online: mode != .offline, expand: mode == .expand)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("expand-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try saved.write(to: file)
        return ExpectedPlan(saved: try SavedPlan.read(from: file), file: file)
    }

    static func apply(_ model: VersionedModel, following plan: ExpectedPlan, expand: Bool, on connection: PostgresConnection) throws {
        var options = ApplyOptions(allowDataLoss: true, online: true)
        options.expand = expand
        options.expectedPlan = plan
        _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options)
    }

    @Test func aPlanSavedWithExpandRunsTheExpansionOnRows() throws {
        let model = try ExpandApplyTests.model()
        try S.withStore(model, rows: 20) { connection in
            let before = try S.rows("recipe", ["name", "rating", "note"], on: connection)
            let plan = try Self.saved(model, mode: .expand, on: connection)
            #expect(plan.saved.fingerprints.options.expand && plan.saved.fingerprints.options.online)
            try Self.apply(model, following: plan, expand: true, on: connection)
            #expect(try S.version(on: connection) == "v2")
            let record = try #require(try ExpansionRecord.read(store: S.store, on: connection))
            #expect(record.viewsSchema == ExpandApplyTests.views && record.deferred.map(\.sql) == [#"ALTER TABLE "shop"."recipe" DROP COLUMN "note""#])
            // Every row, in v1's shape through the views, in v2's in the tables.
            #expect(try ServedVersion.old("recipe", ["_pk", "name", "rating", "note"], on: connection) == before)
            #expect(try S.rows("recipe", ["title", "rating"], on: connection) == before.map { Array($0.prefix(3)) })
            #expect(try S.rows("recipe", ["servings"], on: connection).allSatisfy { $0[1] == "2" })
            #expect(try S.history(on: connection).last == "expand v1 -> v2 succeeded")
        }
    }

    @Test(arguments: [(PlanMode.expand, false), (.online, true), (.offline, true)])
    func aPlanSavedInAnotherModeIsRefusedNamingBothAndNothingChanges(saved mode: PlanMode, expand: Bool) throws {
        let model = try ExpandApplyTests.model()
        try S.withStore(model, rows: 20) { connection in
            let before = try S.rows("recipe", ["name", "rating", "note"], on: connection)
            let plan = try Self.saved(model, mode: mode, on: connection)
            let names: [PlanMode: String] = [.expand: "apply --expand", .online: "apply --online"]
            #expect {
                try Self.apply(model, following: plan, expand: expand, on: connection)
            } throws: { error in
                let text = String(describing: error)
                return error is SavedPlanMismatch
                    && text.contains("mode: saved for \(names[mode] ?? "apply (neither --online nor --expand)"), now \(expand ? "apply --expand" : "apply --online")")
            }
            #expect(try S.version(on: connection) == "v1")
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try S.rows("recipe", ["name", "rating", "note"], on: connection) == before)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(ExpandApplyTests.views)").rows.isEmpty)
        }
    }
}
