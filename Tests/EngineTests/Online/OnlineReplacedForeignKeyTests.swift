import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A foreign key whose delete rule changes (Project's lists Nullify → Cascade, as INaturalist
/// 2.1 → 2.2 changes its project's list): `apply --online` drops the old key in the transaction
/// that adds the new one `NOT VALID`. It used to drop it at the step's start: a project the
/// application deleted in between left its lists linking to nothing, and the new key's
/// validation stopped the step with 23503 (CorpusOnlineWriterTests met it in CI). Until the
/// switch-over the application is on the old version: a trigger keeps the old rule acting on
/// its deletes, also once the new key is in.
/// Proves Planning/Changes: AddForeignKey, DropConstraint (with Online/OnlineReplacedKeys.swift).
@Suite(integration) struct OnlineReplacedForeignKeyTests {
    typealias S = MigratedStore

    static func model(renamed: Bool = false, from old: String = "nullify", to new: String = "cascade") throws -> VersionedModel {
        let version = { (rule: String) in
            S.version("""
                Project: {attributes: {name: string}, relationships: {lists: {destination: List, inverse: project, toMany: true, deleteRule: \(rule)}}}
                List: {attributes: {title: string}, relationships: {project: {destination: Project, inverse: lists}}}
                """)
        }
        // List renamed Checklist, its project owner: the old key is dropped from the renamed table.
        let renamedVersion = S.version("""
            Project: {attributes: {name: string}, relationships: {checklists: {destination: Checklist, inverse: owner, toMany: true, deleteRule: cascade, renamingIdentifier: lists}}}
            Checklist: {renamingIdentifier: List, attributes: {title: string}, relationships: {owner: {destination: Project, inverse: checklists, renamingIdentifier: project}}}
            """)
        return try S.model([("v1", version(old)), ("v2", renamed ? renamedVersion : version(new))])
    }

    static let replacing = "foreign key list.project_pk -> project"

    /// The store's lists linked to projects one to one; returns the first `count` linked projects.
    static func linkedProjects(_ count: Int, _ writer: TwinWriter, on connection: PostgresConnection) throws -> [Int] {
        try writer.both({ """
            UPDATE \(ident: $0, "list") l SET project_pk = p._pk
            FROM (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: $0, "project")) p,
                 (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: $0, "list")) x
            WHERE x._pk = l._pk AND p.n = x.n
            """ }, on: connection)
        return try connection.execute("SELECT project_pk FROM shop.list WHERE project_pk IS NOT NULL ORDER BY _pk LIMIT \(literal: Int64(count))")
            .rows.compactMap { $0[0].flatMap { Int($0) } }
    }

    @Test func theOldKeyIsDroppedInTheTransactionThatAddsTheNewOne() throws {
        let model = try Self.model()
        try ShadowedStore.with(model, store: S.store, shadow: OnlineMigrationTests.shadow) { connection, _ in
            let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
            let phases = try #require(step.phases?.phases)
            let drops = phases.filter { $0.statements.contains { $0.sql.text.contains("DROP CONSTRAINT \"list_project_pk_fkey\"") } }
            #expect(drops.count == 1)
            #expect(drops.first?.statements.map(\.sql.text).last?.hasSuffix("ON DELETE CASCADE NOT VALID") == true, "\(drops.map(\.statements))")
            #expect(drops.first?.summary.hasPrefix(Self.replacing) == true)
            // The trigger keeping the old rule comes in the phase before, and goes at the switch-over.
            let index = try #require(phases.firstIndex { $0.summary.hasPrefix(Self.replacing) })
            let rule = try #require(phases[index - 1].installs.first)
            #expect(rule.table == "project" && rule.name.hasPrefix(OnlineTrigger.firstPrefix + "rule_"))
            #expect(phases[index - 1].statements.contains { $0.sql.text.hasPrefix("CREATE TRIGGER \"\(rule.name)\" AFTER DELETE") })
            #expect(phases.last?.statements.contains { $0.sql.text.hasPrefix("DROP TRIGGER IF EXISTS \"\(rule.name)\"") } == true)
        }
    }

    /// The store's lists linked one to one (and its copy's), five linked projects deleted by
    /// `delete` on a session of its own before phase `prefix`, then the step run online.
    static func migrate(
        _ model: VersionedModel, deletingBefore prefix: String, _ delete: @escaping (TwinWriter, PostgresConnection, Int) throws -> Void,
        then check: (PostgresConnection, _ projects: [Int], _ lists: Int64) throws -> Void
    ) throws {
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: { _, _ in }) { connection, writer, url in
            let projects = try Self.linkedProjects(5, writer, on: connection)
            #expect(projects.count == 5)
            let lists = try #require(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n"))
            try Self.apply(model, on: connection, url: url, deletingBefore: prefix) { session in
                for project in projects { try delete(writer, session, project) }
            }
            try check(connection, projects, lists)
        }
    }

    /// The step run online, `delete` run on a session of its own before phase `prefix`.
    static func apply(
        _ model: VersionedModel, on connection: PostgresConnection, url: String, deletingBefore prefix: String,
        _ delete: @escaping (PostgresConnection) throws -> Void
    ) throws {
        let session = try PostgresConnection(url: url)
        defer { session.close() }
        var deleted = false
        var failure: Error?
        _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(
            options: ApplyOptions(batchSize: 7, online: true),
            onProgress: { event in
                guard !deleted, OnlineTruncateMigrationTests.before(prefix)(event) else { return }
                deleted = true
                do { try delete(session) } catch { failure = error }
            }
        )
        #expect(deleted, "the step never reached \(prefix)")
        #expect(failure == nil, "the application's deletes failed: \(String(describing: failure))")
        #expect(try S.version(on: connection) == "v2")
    }

    static func inList(_ keys: [Int]) -> SQL { "\(unsafeRaw: keys.map(String.init).joined(separator: ", "))" }

    /// Projects deleted by the application just before the new key comes: the old key (SET
    /// NULL) clears their lists' links, the new key validates, and the store equals an offline
    /// migration of the same writes.
    @Test func projectsDeletedBeforeTheNewKeyClearTheirListsLinksAsTheOldRuleSays() throws {
        try Self.migrate(try Self.model(), deletingBefore: Self.replacing, { writer, session, project in
            try writer.delete(from: "project", key: project, on: session)
        }, then: { (connection: PostgresConnection, projects: [Int], lists: Int64) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.project WHERE _pk IN (\(Self.inList(projects)))").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n") == lists)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list WHERE project_pk IS NULL").int(0, "n") == 5)
            let dangling: SQL = "SELECT count(*) AS n FROM shop.list l WHERE project_pk IS NOT NULL AND NOT EXISTS (SELECT 1 FROM shop.project p WHERE p._pk = l.project_pk)"
            #expect(try connection.execute(dangling).int(0, "n") == 0)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(try Self.model(), on: connection)
        })
    }

    /// Once the new key is in (before its validation), the application is still on the old
    /// version: a project's delete clears its lists' links (the old rule, kept by the trigger),
    /// not cascades to them, and the store equals an offline migration of the same writes.
    @Test func projectsDeletedOnceTheNewKeyIsInStillClearTheirListsLinksUntilTheSwitchOver() throws {
        try Self.migrate(try Self.model(), deletingBefore: "validate list_project_pk_fkey", { writer, session, project in
            try writer.delete(from: "project", key: project, on: session)
        }, then: { (connection: PostgresConnection, projects: [Int], lists: Int64) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n") == lists)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list WHERE project_pk IS NULL").int(0, "n") == 5)
            #expect(try TwinStores.leftovers(of: S.store, on: connection) == [])
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(try Self.model(), on: connection)
        })
    }

    /// The other way (Cascade -> Nullify): a project deleted once the new key is in still
    /// takes its lists with it, as the old version says.
    @Test func aCascadeReplacedByNullifyKeepsCascadingUntilTheSwitchOver() throws {
        let model = try Self.model(from: "cascade", to: "nullify")
        try Self.migrate(model, deletingBefore: "validate list_project_pk_fkey", { writer, session, project in
            try writer.delete(from: "project", key: project, on: session)
        }, then: { (connection: PostgresConnection, projects: [Int], lists: Int64) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n") == lists - 5)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list WHERE project_pk IS NULL").int(0, "n") == 0)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        })
    }

    /// A denying key (Deny -> Cascade): once the new key is in, deleting a project that has
    /// lists still fails as the old key fails (23503, naming it), and the lists stay.
    @Test func aDenyReplacedByCascadeKeepsDenyingUntilTheSwitchOver() throws {
        let model = try Self.model(from: "deny", to: "cascade")
        try Self.migrate(model, deletingBefore: "validate list_project_pk_fkey", { _, session, project in
            do {
                try session.execute("DELETE FROM shop.project WHERE _pk = \(literal: Int64(project))")
                Issue.record("project \(project) with a list was deleted under the old Deny rule")
            } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
                #expect(error.message.contains("list_project_pk_fkey"), "\(error)")
            }
        }, then: { (connection: PostgresConnection, projects: [Int], lists: Int64) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.project WHERE _pk IN (\(Self.inList(projects)))").int(0, "n") == 5)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list WHERE project_pk IN (\(Self.inList(projects)))").int(0, "n") == 5)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        })
    }

    /// A run stopped once the trigger is in (the replacing phase cannot lock list) leaves the
    /// old key and the trigger acting, once; the next `apply` reinstalls the trigger by running
    /// its phase again and finishes. Deletes at both points follow the old rule (SET NULL).
    @Test func aRunStoppedOnceTheTriggerIsInResumesWithIt() throws {
        let model = try Self.model()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: { _, _ in }) { connection, writer, url in
            let projects = try Self.linkedProjects(6, writer, on: connection)
            #expect(projects.count == 6)
            let lists = try #require(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n"))
            let (blocker, session) = (try PostgresConnection(url: url), try PostgresConnection(url: url))
            defer { blocker.close(); session.close() }
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            var blocked = false
            #expect(throws: StepFailure.self) {
                try migrator.apply(options: ApplyOptions(lockTimeoutMilliseconds: 300, lockRetries: 1, batchSize: 7, online: true), onProgress: { event in
                    guard !blocked, OnlineTruncateMigrationTests.before(Self.replacing)(event) else { return }
                    blocked = (try? blocker.execute("BEGIN; LOCK TABLE shop.list IN ROW EXCLUSIVE MODE")) != nil
                })
            }
            try blocker.execute("ROLLBACK")
            #expect(blocked, "the run never reached \(Self.replacing)")
            let rules = "SELECT count(*) AS n FROM pg_trigger WHERE tgname LIKE 'ORCHESTRATOR_ONLINE_rule_%'"
            #expect(try connection.execute(SQL(unsafeRaw: rules)).int(0, "n") == 1)
            for project in projects.prefix(3) { try writer.delete(from: "project", key: project, on: session) }
            var failure: Error?, deleted = false
            _ = try migrator.apply(options: ApplyOptions(batchSize: 7, online: true), onProgress: { event in
                guard !deleted, OnlineTruncateMigrationTests.before("validate list_project_pk_fkey")(event) else { return }
                deleted = true
                do { for project in projects.suffix(3) { try writer.delete(from: "project", key: project, on: session) } } catch { failure = error }
            })
            #expect(deleted && failure == nil, "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "v2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list").int(0, "n") == lists)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.list WHERE project_pk IS NULL").int(0, "n") == 6)
            #expect(try connection.execute(SQL(unsafeRaw: rules)).int(0, "n") == 0)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// A relationship of an entity to itself (Folder.children Cascade -> Nullify): the trigger
    /// on the table it links deletes the children of a folder deleted once the new key is in,
    /// and theirs in turn, as the old key does, around a cycle too (folder 1 the child of its
    /// grandchild): a `BEFORE DELETE` trigger looped there until the stack ran out (54001).
    @Test func aSelfReferencingKeyKeepsItsOldRule() throws {
        let version = { (rule: String) in
            S.version("""
                Folder: {attributes: {name: string}, relationships: {children: {destination: Folder, inverse: parent, toMany: true, deleteRule: \(rule)}, parent: {destination: Folder, inverse: children}}}
                """)
        }
        let model = try S.model([("v1", version("cascade")), ("v2", version("nullify"))])
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: { _, _ in }) { connection, writer, url in
            // Chains of three (a folder, its child, the child's child), the first a cycle.
            let folders = try #require(try connection.execute("SELECT count(*) AS n FROM shop.folder").int(0, "n"))
            #expect(try connection.execute("SELECT max(_pk) - min(_pk) + 1 AS n FROM shop.folder").int(0, "n") == folders && folders >= 9)
            try writer.both({ """
                UPDATE \(ident: $0, "folder") SET parent_pk = CASE WHEN _pk = 1 THEN 3 WHEN _pk % 3 = 1 THEN NULL ELSE _pk - 1 END
                """ }, on: connection)
            try Self.apply(model, on: connection, url: url, deletingBefore: "validate folder_parent_pk_fkey") { session in
                for root in [1, 4, 7] { try writer.delete(from: "folder", key: root, on: session) }
            }
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.folder").int(0, "n") == folders - 9)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// The same with the table and the link renamed (List -> Checklist, project -> owner): the
    /// old key, under its old name, is dropped from the renamed table with the new one's add.
    @Test func aKeyReplacedOnARenamedTableIsDroppedFromItThere() throws {
        let model = try Self.model(renamed: true)
        try Self.migrate(model, deletingBefore: "foreign key checklist.owner_pk -> project", { writer, session, project in
            try writer.delete(from: "project", key: project, on: session)
        }, then: { (connection: PostgresConnection, _: [Int], lists: Int64) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.checklist").int(0, "n") == lists)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.checklist WHERE owner_pk IS NULL").int(0, "n") == 5)
            let keys = try connection.execute("SELECT conname, confdeltype FROM pg_constraint WHERE conrelid = 'shop.checklist'::regclass AND contype = 'f'").rows
            #expect(keys == [["checklist_owner_pk_fkey", "c"]])
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        })
    }
}
