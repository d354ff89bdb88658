import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Real apps' version histories applied with `apply --online` to stores holding generated rows,
/// compared with the same runs applied offline: the runs of CorpusRunTests (each maximal run of
/// consecutive pairs that inference accepts, in one go), each on two stores of one database
/// holding the same rows. The online store must end as the offline one, catalog and every row,
/// with nothing of the online run left; a run that stops at its pre-check offline stops online
/// too, neither store touched.
/// Proves Planning/Changes: the online form of every kind the corpus pairs plan.
@Suite(integration) struct CorpusOnlineRunTests {
    static let live = "shop"
    static let offline = "shop_offline"
    /// Fewer rows than CorpusRunTests: two stores per run, and every online phase its own
    /// transactions. Enough for several batches per table (`batchSize`).
    static let rowsPerEntity = 12
    static let batchSize = 5

    @Test(arguments: Corpus.bundles)
    func everyInferableRunAppliesOnlineAsOffline(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        let runs = InferableRun.runs(of: model).filter(\.changesTheModel)
        let started = Date()
        defer { print("CorpusOnlineRunTests: \(bundle): \(runs.count) runs online and offline in \(Int(Date().timeIntervalSince(started))) s") }
        for run in runs {
            let context = "\(bundle), run \(run)"
            try Self.check(run, of: model, in: context)
        }
    }

    /// The comparison sees what an online run could get wrong: a value, a missing row, a
    /// constraint's nullability, an index, a trigger left.
    @Test func theComparisonSeesEveryKindOfDifference() throws {
        let model = try MigratedStore.model([("v1", MigratedStore.version("Recipe: {attributes: {name: string, rating: int16}}"))])
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: "v1", store: Self.live, rows: 4, on: connection)
            try TwinStores.copy(model, version: "v1", from: Self.live, to: Self.offline, on: connection)
            #expect(try TwinComparison.differences(Self.live, Self.offline, on: connection) == [])
            try connection.execute("UPDATE shop.recipe SET rating = 7 WHERE _pk = 2")
            try connection.execute("DELETE FROM shop_offline.recipe WHERE _pk = 3")
            try connection.execute("ALTER TABLE shop.recipe ALTER COLUMN name SET NOT NULL")
            try connection.execute("CREATE INDEX by_rating ON shop_offline.recipe (rating)")
            let differences = try TwinComparison.differences(Self.live, Self.offline, on: connection)
            #expect(differences.count == 4, "\(differences)")
            #expect(differences.contains { $0.hasPrefix("catalog, online only: column recipe.name text nullable=NO") })
            #expect(differences.contains { $0.hasPrefix("catalog, offline only: index recipe by_rating") })
            #expect(differences.contains { $0.hasPrefix("rows of recipe: 4 online, 3 offline;") && $0.contains("_pk=2") && $0.contains("rating=7") && $0.contains("_pk=3") })
            try connection.execute("CREATE FUNCTION shop.noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'")
            try connection.execute("CREATE TRIGGER orchestrator_online_left BEFORE UPDATE ON shop.recipe FOR EACH ROW EXECUTE FUNCTION shop.noop()")
            #expect(try TwinStores.leftovers(of: Self.live, on: connection) == ["trigger recipe.orchestrator_online_left", "function noop"])
        }
    }

    /// 1. Fill the live store at the run's first version; copy it into the offline twin.
    /// 2. Apply the run offline to the twin. If it stops (a pre-check: CorpusRunTests), the
    ///    online apply must stop too, with both stores at the first version and unchanged.
    /// 3. Otherwise apply it online (small batches) and compare: the same steps, the same
    ///    version, the same catalog and rows, no trigger, function, checkpoint or shadow left.
    static func check(_ run: InferableRun, of model: VersionedModel, in context: String) throws {
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: run.first.name, store: live, rows: rowsPerEntity, on: connection)
            try TwinStores.copy(model, version: run.first.name, from: live, to: offline, on: connection)
            let before = try TwinStores.contents(of: live, on: connection)
            let options = ApplyOptions(allowDataLoss: true)
            let offlineOutcome = Result {
                try StoreMigrator(connection: connection, model: model, store: offline, targetVersion: run.last.name).apply(options: options)
            }
            var onlineOptions = options
            onlineOptions.online = true
            onlineOptions.batchSize = batchSize
            let onlineOutcome = Result {
                try StoreMigrator(connection: connection, model: model, store: live, targetVersion: run.last.name).apply(options: onlineOptions)
            }
            switch (offlineOutcome, onlineOutcome) {
            case (.failure(let offlineError), .failure(let onlineError)):
                #expect(run.needsLinksGeneratedRowsLack, "\(context): fails offline (\(offlineError)) and online (\(onlineError))")
                #expect(try TwinStores.version(of: live, on: connection) == run.first.name, "\(context): the store left its version online")
                #expect(try TwinStores.contents(of: live, on: connection) == before, "\(context): rows changed although the online step stopped")
                #expect(try TwinComparison.differences(live, offline, on: connection) == [], "\(context): the stores differ after both stopped")
                let reason = String(describing: onlineError)
                #expect(reason.contains("check: ") || reason.contains("(removed)\": ERROR 23"), "\(context): online failed elsewhere than at its pre-check: \(onlineError)")
            case (.failure(let error), .success):
                Issue.record("\(context): fails offline (\(error)) but applies online")
            case (.success, .failure(let error)):
                Issue.record("\(context): applies offline but fails online: \(error)")
            case (.success(let offlineReport), .success(let onlineReport)):
                #expect(onlineReport.appliedSteps.map(\.step.kind) == offlineReport.appliedSteps.map(\.step.kind), "\(context): other steps online")
                #expect(try TwinStores.version(of: live, on: connection) == run.last.name, "\(context)")
                #expect(try TwinStores.version(of: offline, on: connection) == run.last.name, "\(context)")
                #expect(try TwinStores.rowCount(of: offline, on: connection) > 0, "\(context): no rows compared")
                let differences = try TwinComparison.differences(live, offline, on: connection)
                #expect(differences == [], "\(context): online and offline stores differ:\n\(differences.prefix(12).joined(separator: "\n"))")
                #expect(try TwinStores.leftovers(of: live, on: connection) == [], "\(context): left by the online run")
            }
        }
    }
}
