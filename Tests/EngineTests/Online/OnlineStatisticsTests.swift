import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A table `apply --online` fills in batches is analyzed after its last batch, in the phase's
/// own transaction: the planner knows its rows before the application (or the old version's
/// views under `--expand`) reads them. Without statistics, the old version's to-one read from
/// a new join table (`ORDER BY … LIMIT 1`) walked the whole primary key: 7.7 ms a write at
/// 1M recipes against 0.56 ms with them (docs/online-benchmark.md).
@Suite(integration) struct OnlineStatisticsTests {
    typealias S = MigratedStore

    @Test func aJoinTableFilledInBatchesHasStatisticsWhenTheStepEnds() throws {
        let model = try S.model([
            ("v1", S.version("""
                Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true}}}
                Recipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
                """)),
            ("v2", S.version("""
                Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true}}}
                Recipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, renamingIdentifier: cuisine}}}
                """)),
        ])
        try S.withStore(model) { connection in
            let links = try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "recipe") WHERE cuisine_pk IS NOT NULL").int(0, "n") ?? 0
            #expect(links > 0, "the sample data links recipes to cuisines")
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online)
            let summaries = plan.steps.flatMap { $0.phases?.phases.map(\.summary) ?? [] }
            #expect(summaries.contains { $0.hasSuffix("then its statistics (ANALYZE \"\(S.store)\".\"cuisine__recipes\")") }, "plan --online names it: \(summaries)")
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(batchSize: 50, online: true))
            // Column statistics come from ANALYZE only (an index build sets reltuples, not these);
            // autovacuum's ANALYZE is counted apart, in autoanalyze_count.
            let columns = try connection.execute("""
                SELECT attname FROM pg_stats WHERE schemaname = \(S.store) AND tablename = 'cuisine__recipes' ORDER BY attname
                """).rows.compactMap { $0[0] }
            #expect(columns == ["cuisine_pk", "recipes_pk"])
            let rows = try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "cuisine__recipes")").int(0, "n")
            #expect(rows == links)
        }
    }
}
