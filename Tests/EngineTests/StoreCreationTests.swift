import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Creating a store on an empty database, proven by reading the catalog and writing rows.
@Suite(integration) struct StoreCreationTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func library() throws -> VersionedModel {
        try ModelLoader.loadValidated(path: repository + "/Tests/Fixtures/Library")
    }

    static func withCreatedLibrary(_ body: (PostgresConnection) throws -> Void) throws {
        try TestDatabase.withFreshConnection { connection in
            let report = try StoreMigrator(connection: connection, model: try library(), store: "library").apply()
            #expect(report.appliedSteps.map(\.step.kind) == [.create])
            try body(connection)
        }
    }

    @Test func theStoreFollowsTheLayoutContract() throws {
        try Self.withCreatedLibrary { connection in
            let tables = try connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'library' ORDER BY table_name"
            ).rows.map { $0[0]! }
            #expect(tables == ["all_types", "author", "book__tags", "item", "shelf", "tag", "tag__related_tags"])

            let item = try columns(in: "library", table: "item", on: connection)
            #expect(item.map(\.name) == ["_pk", "_entity", "title", "added_at", "shelf_pk", "isbn", "page_count", "author_pk", "issue_number", "shelf_order"])
            #expect(item.first { $0.name == "title" }?.isNullable == false)
            #expect(item.first { $0.name == "isbn" }?.isNullable == true)

            let types = try columns(in: "library", table: "all_types", on: connection)
            #expect(Dictionary(uniqueKeysWithValues: types.map { ($0.name, $0.dataType) }) == [
                "_pk": "bigint", "_entity": "text", "int16_value": "smallint", "int32_value": "integer",
                "int64_value": "bigint", "decimal_value": "numeric", "double_value": "double precision",
                "float_value": "real", "string_value": "text", "boolean_value": "boolean",
                "date_value": "timestamp with time zone", "binary_value": "bytea", "uuid_value": "uuid",
                "uri_value": "text", "transformable_value": "bytea",
            ])
        }
    }

    @Test func foreignKeysCarryTheDeleteRulesAndAreIndexed() throws {
        try Self.withCreatedLibrary { connection in
            let rules = try connection.execute("""
                SELECT kcu.table_name || '.' || kcu.column_name AS fk, rc.delete_rule
                FROM information_schema.referential_constraints rc
                JOIN information_schema.key_column_usage kcu
                  ON kcu.constraint_name = rc.constraint_name AND kcu.constraint_schema = rc.constraint_schema
                WHERE rc.constraint_schema = 'library' ORDER BY 1
                """).rows.map { "\($0[0]!) \($0[1]!)" }
            #expect(rules == [
                "book__tags.book_pk CASCADE", "book__tags.tags_pk CASCADE", "item.author_pk CASCADE",
                "item.shelf_pk RESTRICT", "tag__related_tags.related_tags_pk CASCADE", "tag__related_tags.tag_pk CASCADE",
            ])
            let indexed = try connection.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'library' ORDER BY indexname"
            ).rows.map { $0[0]! }
            for index in ["item_author_pk_idx", "item_shelf_pk_idx", "book__tags_tags_pk_idx", "tag__related_tags_related_tags_pk_idx", "item_isbn_key"] {
                #expect(indexed.contains(index), "missing index \(index)")
            }
        }
    }

    @Test func rowsObeyTheModel() throws {
        try Self.withCreatedLibrary { connection in
            let author = try connection.execute("INSERT INTO library.author (name) VALUES ('Le Guin') RETURNING _pk").int(0, "_pk")!
            let shelf = try connection.execute("INSERT INTO library.shelf (code) VALUES ('A1') RETURNING _pk").int(0, "_pk")!
            try connection.execute("""
                INSERT INTO library.item (_entity, title, isbn, author_pk, shelf_pk, shelf_order)
                VALUES ('Book', 'The Dispossessed', '978-0', \(author), \(shelf), 0)
                """)
            // A magazine needs no ISBN and no author; a book does (CHECKs scoped to Book).
            try connection.execute("INSERT INTO library.item (_entity, title, issue_number) VALUES ('Magazine', 'Locus', 7)")
            let missingISBN = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO library.item (_entity, title, author_pk) VALUES ('Book', 'Untitled', \(author))")
            }
            #expect(missingISBN?.sqlState == SQLState.checkViolation)
            #expect(missingISBN?.constraint == "item_isbn_required")
            // The abstract entity has no rows of its own.
            let abstract = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO library.item (_entity, title) VALUES ('Item', 'x')")
            }
            #expect(abstract?.constraint == "item_entity_check")
            // Uniqueness is scoped to books.
            let duplicate = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO library.item (_entity, title, isbn, author_pk) VALUES ('Book', 'Copy', '978-0', \(author))")
            }
            #expect(duplicate?.sqlState == SQLState.uniqueViolation)
            // Shelf.items is Deny; Author.books is Cascade.
            let deny = #expect(throws: PostgresError.self) { try connection.execute("DELETE FROM library.shelf WHERE _pk = \(shelf)") }
            #expect(deny?.sqlState == SQLState.foreignKeyViolation)
            try connection.execute("DELETE FROM library.author WHERE _pk = \(author)")
            #expect(try rowCount(schema: "library", table: "item", on: connection) == 1)
            // Defaults apply to rows inserted by applications.
            let defaults = try connection.execute("INSERT INTO library.all_types DEFAULT VALUES RETURNING int16_value, string_value, boolean_value, decimal_value::text AS d")
            #expect(defaults.rows.first == ["7", "it's", "t", "1.50"])
        }
    }

    @Test func afterCreationStatusIsCompatibleAndThePlanIsUpToDate() throws {
        try Self.withCreatedLibrary { connection in
            let migrator = StoreMigrator(connection: connection, model: try Self.library(), store: "library")
            let plan = try migrator.plan()
            #expect(plan.isUpToDate)
            #expect(plan.steps.isEmpty)
            #expect(plan.storeVersion == "Library 1")
            let snapshot = try StoreCatalog.snapshot(store: "library", on: connection)
            #expect(snapshot.metadata?.modelHash == VersionHash.hashes(of: try Self.library().currentVersion).model)
            #expect(snapshot.metadata?.entityHashes == VersionHash.hashes(of: try Self.library().currentVersion).entities)
            // Applying again changes nothing and records nothing.
            let again = try migrator.apply()
            #expect(again.appliedSteps.isEmpty)
            #expect(try rowCount(schema: "orchestrator", table: "migrations", on: connection) == 1)
        }
    }

    @Test func metadataKeepsTheVersionDefinitionAndTheHistory() throws {
        try Self.withCreatedLibrary { connection in
            let stored = try connection.execute(
                "SELECT version_name, model_hash, format, definition FROM orchestrator.model_versions WHERE model_name = 'Library'"
            )
            #expect(stored.rows.count == 1)
            let definition = try #require(stored.value(0, "definition"))
            let recovered = try NativeModelLoader.parseVersion(definition, name: "Library 1", file: "database")
            #expect(VersionHash.hashes(of: recovered).model == stored.value(0, "model_hash"))
            let history = try connection.execute(
                "SELECT kind, from_version, to_version, outcome, jsonb_array_length(statements) AS n FROM orchestrator.migrations"
            )
            #expect(history.rows.first == ["create", nil, "Library 1", "succeeded", "20"])
        }
    }

    @Test func aSchemaThatIsNotAStoreIsRefusedAndLeftAlone() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE SCHEMA library; CREATE TABLE library.mine (x int); INSERT INTO library.mine VALUES (1)")
            let error = #expect(throws: PlanningError.self) {
                try StoreMigrator(connection: connection, model: try Self.library(), store: "library").apply()
            }
            #expect(error == .schemaWithoutMetadata(store: "library"))
            #expect(try rowCount(schema: "library", table: "mine", on: connection) == 1)
            #expect(try !tableExists(schema: "library", table: "item", on: connection))
        }
    }
}
