import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A rename followed by a backfill: the renames cannot wait for the switch-over, so the old
/// version's schema is created before the first of them, as plain views that follow the
/// tables through the renames (`ExpandPlanning.viewsBeforeRenames`). The old release, writing
/// through every phase, never meets a renamed name.
@Suite(integration) struct ExpandBeforeRenamesTests {
    typealias S = MigratedStore

    /// `name` renamed `title`, and `rating` made required with a default (a backfill).
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: {type: int16, optional: false, default: 3}}}")),
        ])
    }

    /// The writers' change kind (v1 as `ExpandChangeKind`'s), and v2 with `name` renamed too.
    static func model(_ kind: ExpandChangeKind) throws -> VersionedModel {
        switch kind {
        case .toOneMadeToMany:
            let chef = OldVersionLinkViewTests.chefAndRecipes
            let renamed = chef("destination: Chef, inverse: recipes, toMany: true", "destination: Recipe, inverse: chef, toMany: true")
                .replacingOccurrences(of: "Recipe: {attributes: {name: string}", with: "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}}")
            return try S.model([("v1", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true")), ("v2", renamed)])
        case .renamedAndMovedBelowANewParent:
            return try kind.model()
        default:
            return try model()
        }
    }

    @Test func thePlanCreatesPlainViewsBeforeTheFirstRenameAndReplacesThemAtTheSwitchOver() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 5) { connection in
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand)
            let phases = try #require(plan.steps.first?.phases?.phases)
            let early = try #require(phases.firstIndex { $0.summary.hasPrefix("serve 'v1' in shop@v1 before the renames") })
            let rename = try #require(phases.firstIndex { $0.statements.contains { $0.sql.text.contains(" RENAME ") } })
            #expect(early < rename && rename < phases.count - 1, "\(phases.map(\.summary))")
            #expect(phases[early].statements.map(\.sql.text).last == #"CREATE VIEW "shop@v1"."recipe" AS SELECT "_pk", "_entity", "name", "rating" FROM "shop"."recipe""#)
            #expect(phases.last?.statements.first?.sql.text == #"DROP SCHEMA "shop@v1" CASCADE"#)
        }
    }

    @Test(arguments: [ExpandChangeKind.requiredWithDefault, .toOneMadeToMany, .renamedAndMovedBelowANewParent])
    func theOldReleaseWritesThroughEveryPhaseWithoutMeetingARenamedName(kind: ExpandChangeKind) throws {
        let model = try Self.model(kind)
        try ShadowedStore.with(model, store: S.store, shadow: ExpandApplyTests.shadow) { connection, url in
            // No renamed table or column is retried: one would fail the writer.
            let old = TwinWriter(url: url, live: S.store, twin: ExpandApplyTests.shadow, rules: .throughViews, write: kind.oldRelease)
            var running = [old]
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(10)
            let planned = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand).steps.first?.phases?.phases ?? []
            #expect(planned.contains { $0.summary.hasPrefix("serve 'v1' in shop@v1 before the renames") }, "\(planned.map(\.summary))")
            // Two writes of the old release before each phase: some run between the rename and
            // the switch-over.
            let phases = try ExpandChangeKindWritersTests.expand(model, waitingFor: old, on: connection)
            #expect(phases >= 4)
            old.waitForCommits(old.commits + 10)
            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            #expect(old.refused.isEmpty, "\(old.refused)")
            #expect(old.commits >= 10 + 2 * phases)
            // The old release reads its rows as v1 holds them; the completed store is the offline twin's.
            let (table, columns, twinColumns) = kind.compared
            let twin = try connection.execute("SELECT \(SQL.joined(twinColumns, separator: ", ")) FROM \(ident: ExpandApplyTests.shadow, table) ORDER BY 1, 2").rows
            TwinComparison.expectSameRows(try ServedVersion.old(table, columns, on: connection), twin)
            #expect(try ExpansionRecord.read(store: S.store, on: connection)?.oldVersion == "v1")
            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }
}
