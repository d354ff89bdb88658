import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Helpers of the lightweight integration tests: a model from inline versions, a store filled
/// at the first version, and the checks every migrated store must pass.
enum MigratedStore {
    static let store = "shop"

    /// A versioned model from native YAML versions, oldest first; the last is current.
    static func model(_ versions: [(name: String, yaml: String)]) throws -> VersionedModel {
        let parsed = try versions.map { try NativeModelLoader.parseVersion($0.yaml, name: $0.name, file: "\($0.name).yaml") }
        for version in parsed {
            let issues = ModelValidator.validate(version)
            #expect(issues.isEmpty, "test version \(version.name) is invalid: \(issues)")
        }
        return VersionedModel(name: "Shop", versions: parsed, currentVersionName: parsed.last!.name, path: "inline", format: .native)
    }

    /// `entities:` followed by entity lines (flow style), as in the planning tests.
    static func version(_ entityLines: String) -> String {
        "entities:\n" + entityLines.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
    }

    /// A fresh database holding the store at the model's first version, `rows` rows per entity.
    static func withStore(_ model: VersionedModel, rows: Int = 300, _ body: (PostgresConnection) throws -> Void) throws {
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: model.versions[0].name, store: store, rows: rows, on: connection)
            try body(connection)
        }
    }

    /// Applies the plan to the current version; the report says what ran.
    @discardableResult
    static func migrate(_ model: VersionedModel, allowDataLoss: Bool = false, on connection: PostgresConnection) throws -> ApplyReport {
        try StoreMigrator(connection: connection, model: model, store: store).apply(options: ApplyOptions(allowDataLoss: allowDataLoss))
    }

    /// The version the store's metadata names.
    static func version(on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name")
    }

    /// Kinds of the migrations recorded for the store, oldest first.
    static func history(on connection: PostgresConnection) throws -> [String] {
        try connection.execute("SELECT kind || ' ' || coalesce(from_version, '-') || ' -> ' || to_version || ' ' || outcome AS line FROM orchestrator.migrations WHERE store = \(store) ORDER BY id")
            .rows.map { $0[0] ?? "" }
    }

    /// Rows as text, ordered by `_pk`: `SELECT _pk, <columns> FROM <table> ORDER BY _pk`.
    static func rows(_ table: String, _ columns: [String], where condition: String? = nil, on connection: PostgresConnection) throws -> [[String?]] {
        var sql: SQL = "SELECT \(idents: ["_pk"] + columns) FROM \(ident: store, table)"
        if let condition { sql.append(" WHERE \(unsafeRaw: condition)") }
        sql.append(" ORDER BY 1")
        return try connection.execute(sql).rows
    }

    /// After a migration: the catalog is the one a fresh `CREATE` of the current version gives
    /// (tables, columns, types, nullability, defaults, constraints and indexes with their
    /// definitions, sequences; column order aside), and the plan is up to date.
    static func expectFollowsContract(_ model: VersionedModel, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fresh = "fresh_copy"
        _ = try StoreMigrator(connection: connection, model: model, store: fresh).apply()
        let migrated = try catalog(of: store, on: connection)
        let expected = try catalog(of: fresh, on: connection)
        #expect(!expected.isEmpty, sourceLocation: sourceLocation)
        #expect(migrated.filter { !expected.contains($0) } == [], "in the migrated store only", sourceLocation: sourceLocation)
        #expect(expected.filter { !migrated.contains($0) } == [], "in a fresh store only", sourceLocation: sourceLocation)
        try connection.execute("DROP SCHEMA \(ident: fresh) CASCADE")
        #expect(try StoreMigrator(connection: connection, model: model, store: store).plan().isUpToDate, sourceLocation: sourceLocation)
    }

    /// One line per catalog fact of a schema, with the schema's name left out.
    static func catalog(of schema: String, on connection: PostgresConnection) throws -> [String] {
        try TwinComparison.catalog(of: schema, on: connection)
    }
}
