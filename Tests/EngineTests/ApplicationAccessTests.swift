import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The application's role is not the store's owner: it holds grants on the store's schema,
/// tables, columns and identity sequences. A migration that rebuilds tables (heavyweight, and
/// the table an entity leaves under `apply --online`) gives the new ones the old ones' grants,
/// owner and comments; one whose tables carry the application's views refuses, changing nothing.
@Suite(integration) struct ApplicationAccessTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    /// A fresh database with the store at the model's first version, a login role named
    /// `grants_<random>` (with a password, for servers that ask for one) and a role
    /// `grants_<random>_owner` to own tables, both dropped afterwards, and a way to connect as
    /// the first.
    static func withApplicationRole(
        _ model: VersionedModel, _ body: (_ connection: PostgresConnection, _ role: String, _ connectAsRole: () throws -> PostgresConnection) throws -> Void
    ) throws {
        let role = "grants_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let password = UUID().uuidString
        let admin = try PostgresConnection(url: try #require(TestDatabase.adminURL))
        defer { admin.close() }
        try admin.execute("CREATE ROLE \(ident: role) LOGIN PASSWORD \(literal: password)")
        // After the database (and the roles' privileges and objects in it) is gone.
        defer { _ = try? admin.execute("DROP ROLE IF EXISTS \(ident: role), \(ident: role + "_owner")") }
        try admin.execute("CREATE ROLE \(ident: role + "_owner")")
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: model.versions[0].name, store: S.store, rows: 300, on: connection)
            try body(connection, role) { try PostgresConnection(url: TestDatabase.connectionString(url, user: role, password: password)) }
        }
    }

    /// The application's setup: usage of the schema, reads and writes on `table`, its identity
    /// sequence, comments on the table and on `column`, and only `column` of `readOnly`.
    static func grant(_ role: String, table: String, column: String, readOnly: String, on connection: PostgresConnection) throws {
        try connection.execute("GRANT USAGE ON SCHEMA \(ident: S.store) TO \(ident: role)")
        try connection.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON \(ident: S.store, table) TO \(ident: role)")
        let sequence = try #require(try connection.execute("SELECT pg_get_serial_sequence(\(quoteIdentifier(S.store) + "." + quoteIdentifier(table)), '_pk') AS s").value(0, "s"))
        try connection.execute("GRANT USAGE, SELECT ON SEQUENCE \(unsafeRaw: sequence) TO \(ident: role)")
        try connection.execute("GRANT SELECT (\(ident: column)) ON \(ident: S.store, readOnly) TO \(ident: role)")
        try connection.execute("COMMENT ON TABLE \(ident: S.store, table) IS 'kept by the application'")
        try connection.execute("COMMENT ON COLUMN \(ident: S.store, table).\(ident: column) IS 'shown to users'")
    }

    /// As the role: read, insert (through the identity sequence), update and delete in
    /// `table`; read `column` of `readOnly` and nothing else of it; the comments are there.
    static func expectApplicationWorks(_ role: PostgresConnection, table: String, column: String, readOnly: String, on connection: PostgresConnection) throws {
        let rows = try role.execute("SELECT count(*) AS n FROM \(ident: S.store, table)").int(0, "n") ?? 0
        #expect(rows > 0)
        let key = try #require(try role.execute("INSERT INTO \(ident: S.store, table) (_entity, \(ident: column)) VALUES (\(try entity(of: table, on: connection)), 'by the application') RETURNING _pk").int(0, "_pk"))
        #expect(try role.execute("UPDATE \(ident: S.store, table) SET \(ident: column) = 'changed' WHERE _pk = \(key)").affectedRows == 1)
        #expect(try role.execute("DELETE FROM \(ident: S.store, table) WHERE _pk = \(key)").affectedRows == 1)
        #expect(try role.execute("SELECT count(\(ident: column)) AS n FROM \(ident: S.store, readOnly)").int(0, "n") ?? 0 > 0)
        #expect(throws: PostgresError.self) { try role.execute("SELECT _pk FROM \(ident: S.store, readOnly)") }
        let comments = try connection.execute("""
            SELECT obj_description(to_regclass(\(quoteIdentifier(S.store) + "." + quoteIdentifier(table))), 'pg_class') AS t,
                   col_description(to_regclass(\(quoteIdentifier(S.store) + "." + quoteIdentifier(table))), (
                       SELECT attnum FROM pg_attribute WHERE attrelid = to_regclass(\(quoteIdentifier(S.store) + "." + quoteIdentifier(table))) AND attname = \(column))::int) AS c
            """)
        #expect(comments.rows == [["kept by the application", "shown to users"]])
    }

    /// Some concrete entity the table's rows name.
    static func entity(of table: String, on connection: PostgresConnection) throws -> String {
        try #require(try connection.execute("SELECT _entity FROM \(ident: S.store, table) LIMIT 1").value(0, "_entity"))
    }

    static func online() -> ApplyOptions { ApplyOptions(online: true) }

    // MARK: Heavyweight

    @Test(arguments: [false, true]) func aHeavyweightStepKeepsTheApplicationsGrantsOwnerAndComments(online: Bool) throws {
        let model = try Kitchen.kitchen()
        try Self.withApplicationRole(model) { connection, role, connectAsRole in
            try Self.grant(role, table: "recipe", column: "name", readOnly: "chef", on: connection)
            try connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA \(ident: S.store) TO PUBLIC")
            try connection.execute("REVOKE SELECT ON \(ident: S.store, "chef") FROM PUBLIC")
            try connection.execute("ALTER TABLE \(ident: S.store, "chef") OWNER TO \(ident: role + "_owner")")

            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: online ? Self.online() : ApplyOptions())
            #expect(try S.version(on: connection) == "Kitchen 2")
            let session = try connectAsRole()
            defer { session.close() }
            try Self.expectApplicationWorks(session, table: "recipe", column: "name", readOnly: "chef", on: connection)
            // The new column the mapping fills has no grant of its own: the table's covers it.
            #expect(try session.execute("SELECT count(total_cost) AS n FROM shop.recipe").int(0, "n") ?? 0 > 0)
            #expect(try connection.execute("SELECT pg_get_userbyid(relowner) AS o FROM pg_class WHERE oid = 'shop.chef'::regclass").value(0, "o") == role + "_owner")
            #expect(try connection.execute("SELECT has_table_privilege('public', 'shop.recipe', 'SELECT') AS p").bool(0, "p") == true)
            #expect(try connection.execute("SELECT has_table_privilege('public', 'shop.chef', 'SELECT') AS p").bool(0, "p") == false)
            // The backup keeps its own.
            #expect(try connection.execute("SELECT has_table_privilege(\(role), '\"shop~\".recipe', 'INSERT') AS p").bool(0, "p") == true)
        }
    }

    @Test(arguments: [false, true]) func aHeavyweightStepRefusesWhileAViewReadsTheStoreChangingNothing(online: Bool) throws {
        let model = try Kitchen.kitchen()
        try Self.withApplicationRole(model) { connection, _, _ in
            try connection.execute("CREATE VIEW public.chef_names AS SELECT name FROM shop.chef")
            try connection.execute("CREATE TABLE public.audit (chef_pk bigint REFERENCES shop.chef (_pk))")
            try connection.execute("CREATE POLICY own_rows ON shop.recipe USING (true)")
            let step = " (step 1 of 1 replaces every table of shop): drop it before migrating and create it again after (docs/store-format.md, \"What the application added\")"
            let expected = [
                Blocker(.dependentObjects, "foreign key audit_chef_pk_fkey of audit on shop.chef" + step),
                Blocker(.dependentObjects, "row-level security policy own_rows on shop.recipe" + step),
                Blocker(.dependentObjects, "view chef_names on shop.chef" + step),
            ]
            #expect(try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).plan().blockerDetails == expected)
            let error = try #require(throws: NotExecutable.self) {
                _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: online ? Self.online() : ApplyOptions())
            }
            #expect(error.blockerDetails == expected)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'shop~%'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgrelid = 'shop.chef'::regclass AND NOT tgisinternal").int(0, "n") == 0)
        }
    }

    // MARK: Lightweight

    @Test(arguments: [false, true]) func anEntityLeavingItsTableKeepsTheApplicationsGrantsAndComments(online: Bool) throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try Self.withApplicationRole(model) { connection, role, connectAsRole in
            try Self.grant(role, table: "animal", column: "name", readOnly: "owner", on: connection)
            let animals = try S.rows("animal", ["name"], where: "_entity = 'Animal'", on: connection)

            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: online ? Self.online() : ApplyOptions())
            #expect(try S.version(on: connection) == "v2")
            #expect(try S.rows("animal", ["name"], on: connection) == animals)
            let session = try connectAsRole()
            defer { session.close() }
            try Self.expectApplicationWorks(session, table: "animal", column: "name", readOnly: "owner", on: connection)
        }
    }

    @Test func anEntityLeavingATableAViewReadsRefusesOnlineChangingNothing() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try Self.withApplicationRole(model) { connection, _, _ in
            try connection.execute("CREATE VIEW public.animal_names AS SELECT name FROM shop.animal")
            let before = try S.rows("animal", ["_entity", "name"], on: connection)
            let error = try #require(throws: DependentObjects.self) {
                _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: Self.online())
            }
            #expect(error.objects == ["view animal_names on shop.animal (step 1 of 1 rebuilds shop.animal)"])
            // Decided in Planning: `plan --online` holds what `apply --online` refuses.
            #expect(try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).dependentsOfRebuiltTables == error.objects)
            #expect(error.description.contains("Nothing was changed"))
            #expect(try StoreMigrator(connection: connection, model: model, store: S.store).plan().blockerDetails.isEmpty, "offline, the table is altered in place")
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.rows("animal", ["_entity", "name"], on: connection) == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_class WHERE relname LIKE 'orchestrator_online_%'").int(0, "n") == 0)
            // Offline, the table is altered in place: the view keeps reading it.
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply()
            #expect(try connection.execute("SELECT count(*) AS n FROM public.animal_names").int(0, "n") == Int64(before.filter { $0[1] == "Animal" }.count))
        }
    }
}
