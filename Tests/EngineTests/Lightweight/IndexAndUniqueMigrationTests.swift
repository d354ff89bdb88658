import Foundation
import Testing
import ObjectModel
import PostgresClient
import TestSupport
@testable import Engine

/// Fetch indexes and uniqueness constraints added and removed, offline and with `--online`, on
/// stores holding rows: every row is kept, and the catalog is the one a fresh store of the new
/// version has.
/// Proves Planning/Changes: AddUnique, CreateIndex, DropIndex, DropUnique, DropConstraint (each
/// also has its rule rows beside it in PlanningTests/Changes).
@Suite(integration) struct IndexAndUniqueMigrationTests {
    typealias S = MigratedStore

    /// v1: a fetch index on recipes' names, a code unique among recipes, a bark unique among
    /// dogs; v2: none of them, and a rating index and a unique label instead.
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string, code: string, label: string, rating: int16}, uniquenessConstraints: [[code]], indexes: {byName: [name]}}
                Animal: {attributes: {name: string}}
                Dog: {parent: Animal, attributes: {bark: string}, uniquenessConstraints: [[bark]]}
                """)),
            ("v2", S.version("""
                Recipe: {attributes: {name: string, code: string, label: string, rating: int16}, uniquenessConstraints: [[label]], indexes: {byRating: [rating]}}
                Animal: {attributes: {name: string}}
                Dog: {parent: Animal, attributes: {bark: string}}
                """)),
        ])
    }

    /// The store at v1 with 40 rows a table, its labels distinct (or, with `duplicateLabels`,
    /// two recipes sharing one).
    static func withStore(duplicateLabels: Bool = false, _ body: (PostgresConnection) throws -> Void) throws {
        try S.withStore(try model(), rows: 40) { connection in
            try connection.execute("UPDATE shop.recipe SET code = 'code ' || _pk, label = 'label ' || _pk")
            try connection.execute("UPDATE shop.animal SET bark = 'woof ' || _pk WHERE _entity = 'Dog'")
            if duplicateLabels { try connection.execute("UPDATE shop.recipe SET label = 'same' WHERE _pk IN (3, 4)") }
            try body(connection)
        }
    }

    static func everyRow(on connection: PostgresConnection) throws -> [[String?]] {
        try S.rows("recipe", ["name", "code", "label", "rating"], on: connection) + S.rows("animal", ["_entity", "name", "bark"], on: connection)
    }

    static func indexes(on connection: PostgresConnection) throws -> [String] {
        try connection.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'shop' ORDER BY 1").rows.compactMap { $0[0] }
    }

    @Test(arguments: [false, true])
    func indexesAndUniquenessConstraintsChangeAndEveryRowStays(online: Bool) throws {
        try Self.withStore { connection in
            let rows = try Self.everyRow(on: connection)
            let before = try Self.indexes(on: connection)
            let migrator = StoreMigrator(connection: connection, model: try Self.model(), store: S.store)
            _ = try migrator.apply(options: ApplyOptions(batchSize: 7, online: online))
            #expect(try S.version(on: connection) == "v2")
            #expect(try Self.everyRow(on: connection) == rows)
            let after = try Self.indexes(on: connection)
            #expect(after != before)
            try S.expectFollowsContract(try Self.model(), on: connection)
            // A second recipe with a label taken is refused now; a code taken is not any more,
            // nor a bark another dog has.
            #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO shop.recipe (_entity, label) VALUES ('Recipe', 'label 1')") }
            try connection.execute("INSERT INTO shop.recipe (_entity, code) VALUES ('Recipe', 'code 1')")
            try connection.execute("INSERT INTO shop.animal (_entity, bark) SELECT 'Dog', bark FROM shop.animal WHERE bark IS NOT NULL LIMIT 1")
        }
    }

    @Test(arguments: [false, true])
    func aUniquenessConstraintTheRowsBreakIsRefusedWithNothingChanged(online: Bool) throws {
        try Self.withStore(duplicateLabels: true) { connection in
            let rows = try Self.everyRow(on: connection)
            let before = try Self.indexes(on: connection)
            let migrator = StoreMigrator(connection: connection, model: try Self.model(), store: S.store)
            #expect(throws: (any Error).self) { try migrator.apply(options: ApplyOptions(batchSize: 7, online: online)) }
            #expect(try S.version(on: connection) == "v1")
            #expect(try Self.everyRow(on: connection) == rows)
            if !online { #expect(try Self.indexes(on: connection) == before) }
        }
    }
}
