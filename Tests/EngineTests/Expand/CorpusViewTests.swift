import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Consecutive pairs of real apps' models that inference accepts and today's `apply` runs on
/// generated rows, whose old version's views translate values (a trigger; up to
/// `pairsOnRowsPerBundle` a bundle, as every pair of a long history takes minutes): the views
/// are created over the migrated store, every view is read, and an update through every view
/// with a trigger that writes each row back as read leaves every row of the store as it was.
/// Every pair is generated or refused without a database in `CorpusExpandTests`. `SHOW=1`
/// prints each pair's outcome.
@Suite(integration) struct CorpusViewTests {
    typealias S = MigratedStore
    static let pairsOnRowsPerBundle = 3

    @Test(arguments: Corpus.bundles)
    func everyServedPairReadsAndWritesBackEveryRowUnchanged(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        var onRows = 0
        for (source, target) in zip(model.versions, model.versions.dropFirst()) {
            guard let mapping = MappingInference.infer(from: source, to: target).mapping,
                  VersionHash.hashes(of: source).model != VersionHash.hashes(of: target).model,
                  !mapping.checksLinks, !mapping.removesRequiredLinkTargets(in: source),
                  (try? LightweightMigration.step(for: mapping, from: source, to: target, schema: S.store)) != nil else { continue }
            let pair = "\(bundle), \(source.name) -> \(target.name)"
            let views: OldVersionViews
            do {
                views = try OldVersionViews(mapping: mapping, from: source, to: target, store: S.store)
            } catch {
                Self.show("\(pair): refused: \(error.refusals.map(\.description).joined(separator: "; "))")
                continue
            }
            Self.show("\(pair): served, \(views.viewNames.count) views, \(views.autoUpdatableViews.count) auto-updatable")
            // On rows: the pairs whose views translate (a trigger), a few per bundle.
            guard views.autoUpdatableViews.count < views.viewNames.count, onRows < Self.pairsOnRowsPerBundle else { continue }
            onRows += 1
            try TestDatabase.withFreshConnection { connection in
                try SampleDataTests.createAndFill(model, version: source.name, store: S.store, rows: 5, on: connection)
                _ = try StoreMigrator(connection: connection, model: model, store: S.store, targetVersion: target.name)
                    .apply(options: ApplyOptions(allowDataLoss: true))
                try connection.transaction {
                    for statement in views.statements { try connection.execute(statement) }
                }
                let before = try Self.contents(of: S.store, on: connection)
                for name in views.viewNames {
                    _ = try connection.execute("SELECT count(*) FROM \(ident: views.schema, name)")
                }
                for name in views.viewNames where !views.autoUpdatableViews.contains(name) {
                    let key = try #require(try connection.execute("SELECT attname FROM pg_attribute WHERE attrelid = \(nameLiteral: views.schema, name)::regclass AND attnum = 1").rows.first?[0])
                    try connection.execute("UPDATE \(ident: views.schema, name) SET \(ident: key) = \(ident: key)")
                }
                #expect(try Self.contents(of: S.store, on: connection) == before, "\(pair): writing rows back through the views changed the store")
            }
        }
    }

    /// Every row of every table of a schema, as text.
    static func contents(of schema: String, on connection: PostgresConnection) throws -> [String] {
        let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(literal: schema) ORDER BY 1").rows.map { $0[0]! }
        return try tables.map { table in
            try connection.execute("SELECT \(literal: table) || ': ' || coalesce(string_agg(t::text, '|' ORDER BY t::text), '') FROM \(ident: schema, table) AS t").rows[0][0] ?? ""
        }
    }

    static func show(_ line: String) {
        if ProcessInfo.processInfo.environment["SHOW"] == "1" { print(line) }
    }
}
