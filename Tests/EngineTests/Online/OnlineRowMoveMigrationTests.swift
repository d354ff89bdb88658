import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of steps that move rows between tables while the application
/// writes: an entity moved out of its hierarchy (its rows and the links to them), rows of a
/// removed entity deleted with the links to them, a one-to-one whose column changes sides.
/// Each ends equal to an offline migration of the final data, catalog and rows.
/// Proves Planning/Changes: CopyRows, DeleteRows, DetachReferences, FillToOneColumn (with
/// Online/OnlineArrangement.swift).
@Suite(integration) struct OnlineRowMoveMigrationTests {
    typealias S = MigratedStore
    static let shadow = OnlineMigrationTests.shadow

    /// The offline hierarchy test's move: Dog leaves Animal's table for its own.
    static func movedEntity() throws -> VersionedModel { try HierarchyMigrationTests.dogLeavesAnimals() }

    /// First-version writes on every table: dogs and animals inserted, updated (owner and
    /// favourite links too) and deleted, over keys the batches passed and keys they had not.
    static func writeAnimals(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        let animal = w.random(1...700), owner = w.random(1...330)
        switch w.random(0...7) {
        case 0:
            try w.insert(into: "animal", columns: ["_entity", "name", "bark", "owner_pk"], values: {
                "'Dog', 'rex', 'woof', (SELECT _pk FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner))"
            }, on: connection)
        case 1:
            try w.insert(into: "animal", columns: ["_entity", "name"], values: { _ in "'Animal', 'cat'" }, on: connection)
        case 2, 3:
            try w.both({ """
                UPDATE \(ident: $0, "animal") SET name = name || '!', bark = CASE WHEN _entity = 'Dog' THEN coalesce(bark, '') || 'f' END,
                owner_pk = CASE WHEN _entity = 'Dog' THEN (SELECT _pk FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner)) END WHERE _pk = \(literal: animal)
                """ }, on: connection)
        case 4:
            try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
        case 5:
            try w.both({ """
                UPDATE \(ident: $0, "owner") SET name = name || '~',
                favourite_pk = (SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal) AND _entity = 'Dog') WHERE _pk = \(literal: owner)
                """ }, on: connection)
        case 6:
            try w.both({ "DELETE FROM \(ident: $0, "owner") WHERE _pk = \(literal: owner)" }, on: connection)
        default:
            try w.insert(into: "owner", columns: ["_entity", "name", "favourite_pk"], values: {
                "'Owner', 'ann', (SELECT _pk FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal) AND _entity = 'Dog')"
            }, on: connection)
        }
    }

    /// The dogs are mirrored into their table, and the rows that stay in animal into a shadow
    /// built beside it, while the application writes (dogs and animals, rows the batches passed
    /// and rows they had not); the switch-over swaps the shadow in: animal is a new table, no
    /// shadow is left, and new animals continue the old table's identity.
    @Test func anEntityMovedOutOfItsHierarchyKeepsEveryWriteMadeWhileItsRowsMove() throws {
        let model = try Self.movedEntity()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writeAnimals) { connection, writer, _ in
            let old = try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")!
            try Self.expectRebuilt(model, on: connection)
            try Self.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            #expect(try connection.execute("SELECT 'shop.animal'::regclass::oid AS o").int(0, "o")! != old, "animal was not rebuilt beside itself")
            try Self.expectNoShadowLeft(on: connection)
            // New dogs continue after the largest _pk moved, written meanwhile included; new
            // animals after every key the old table gave, the dogs' included.
            let largest = try connection.execute("SELECT max(_pk) AS n FROM shop.dog").int(0, "n")!
            #expect(try connection.execute("INSERT INTO shop.dog (name) VALUES ('Rex') RETURNING _pk").int(0, "_pk")! > largest)
            let given = try connection.execute("SELECT greatest((SELECT max(_pk) FROM shop.animal), \(literal: largest)) AS n").int(0, "n")!
            #expect(try connection.execute("INSERT INTO shop.animal (_entity, name) VALUES ('Animal', 'Tom') RETURNING _pk").int(0, "_pk")! > given)
        }
    }

    /// Dog leaves a table whose rows that stay carry more: a unique tag, an index, a link to a
    /// toy (its foreign key and index), a sub-entity's required attribute (a check). The
    /// shadow has them all from its start, under the names the switch-over gives it.
    static func movedFromAFullTable() throws -> VersionedModel {
        let animal = """
            Animal: {attributes: {name: string, tag: {type: string, optional: false}}, uniquenessConstraints: [[tag]], indexes: {byName: [name]}, relationships: {toy: {destination: Toy}}}
            Cat: {parent: Animal, attributes: {lives: {type: int16, optional: false, default: 9}}}
            Toy: {attributes: {label: string}}
            """
        return try S.model([
            ("v1", S.version(animal + "\nDog: {parent: Animal, attributes: {bark: string}}")),
            ("v2", S.version(animal + "\nDog: {attributes: {name: string, tag: {type: string, optional: false}, bark: string}, relationships: {toy: {destination: Toy}}}")),
        ])
    }

    /// First-version writes: dogs, cats and animals inserted (fresh tags), renamed, relinked,
    /// retagged and deleted; toys deleted (the links to them cleared by their delete rule, in
    /// the old table and in the shadow alike) and inserted.
    static func writeFullAnimals(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        let animal = w.random(1...1000), toy = w.random(1...330), tag = "w-" + UUID().uuidString
        let link: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "toy") WHERE _pk = \(literal: toy))" }
        switch w.random(0...7) {
        case 0:
            try w.insert(into: "animal", columns: ["_entity", "name", "tag", "bark", "toy_pk"], values: { "'Dog', 'rex', \(literal: tag), 'woof', \(link($0))" }, on: connection)
        case 1:
            try w.insert(into: "animal", columns: ["_entity", "name", "tag", "lives", "toy_pk"], values: { "'Cat', 'tom', \(literal: tag), 7, \(link($0))" }, on: connection)
        case 2:
            try w.both({ "UPDATE \(ident: $0, "animal") SET name = coalesce(name, '') || '!', toy_pk = \(link($0)) WHERE _pk = \(literal: animal)" }, on: connection)
        case 3:
            try w.both({ "UPDATE \(ident: $0, "animal") SET tag = \(literal: tag) WHERE _pk = \(literal: animal)" }, on: connection)
        case 4:
            try w.both({ "DELETE FROM \(ident: $0, "animal") WHERE _pk = \(literal: animal)" }, on: connection)
        case 5:
            try w.both({ "DELETE FROM \(ident: $0, "toy") WHERE _pk = \(literal: toy)" }, on: connection)
        case 6:
            try w.insert(into: "toy", columns: ["_entity", "label"], values: { _ in "'Toy', 'ball'" }, on: connection)
        default:
            try w.insert(into: "animal", columns: ["_entity", "name", "tag"], values: { _ in "'Animal', 'cow', \(literal: tag)" }, on: connection)
        }
    }

    @Test func theRowsThatStayKeepTheirUniqueTagsIndexesChecksAndLinksInTheRebuiltTable() throws {
        let model = try Self.movedFromAFullTable()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writeFullAnimals) { connection, writer, _ in
            try Self.expectRebuilt(model, on: connection)
            try Self.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            try Self.expectNoShadowLeft(on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal WHERE _entity = 'Cat' AND toy_pk IS NOT NULL").int(0, "n")! > 0)
        }
    }

    /// Dog and Cat leave Animal's table, which is renamed Creature: one shadow, named as the
    /// table ends, is swapped in. The writer writes a table the step leaves alone (the
    /// animals' table changes its name under it).
    @Test func twoEntitiesLeavingARenamedTableEndAsOffline() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}\nCat: {parent: Animal, attributes: {lives: int16}}\nToy: {attributes: {label: string}}")),
            ("v2", S.version("Creature: {renamingIdentifier: Animal, attributes: {name: string}}\nDog: {attributes: {name: string, bark: string}}\nCat: {attributes: {name: string, lives: int16}}\nToy: {attributes: {label: string}}")),
        ])
        let writeToys: TwinWriter.Write = { w, connection in
            let toy = w.random(1...330)
            switch w.random(0...2) {
            case 0: try w.insert(into: "toy", columns: ["_entity", "label"], values: { _ in "'Toy', 'ball'" }, on: connection)
            case 1: try w.both({ "UPDATE \(ident: $0, "toy") SET label = coalesce(label, '') || '!' WHERE _pk = \(literal: toy)" }, on: connection)
            default: try w.both({ "DELETE FROM \(ident: $0, "toy") WHERE _pk = \(literal: toy)" }, on: connection)
            }
        }
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: writeToys) { connection, writer, _ in
            try Self.expectRebuilt(model, on: connection)
            try Self.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            try Self.expectNoShadowLeft(on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.creature").int(0, "n") == 300)
        }
    }

    /// Stopped at the first foreign key after the rows were copied: the mirroring trigger
    /// stays and keeps the rows written meanwhile right; a plain `apply` continues and ends
    /// as offline.
    @Test func anInterruptedMoveContinuesWithPlainApplyAndLeavesNoTrigger() throws {
        try Self.interruptThenFinish(stop: { blocker, event in
            guard event.pass == 1, event.kind == .passStarted else { return false }
            try blocker.execute("BEGIN; LOCK TABLE shop.owner IN ROW EXCLUSIVE MODE")
            return true
        }, unfinished: { failure, connection in
            #expect(failure?.statement?.summary.hasPrefix("foreign key") == true, "\(String(describing: failure))")
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_move_%'").rows
            #expect(left.count == 1, "the mirroring trigger stays while the step is unfinished")
        })
    }

    /// Stopped in the middle of the shadow's batches (its table locked away), with plain
    /// `apply` to finish or `--restart`: the shadow and both triggers stay meanwhile and keep
    /// the rows written right; the finishing run continues the batches and swaps the shadow in.
    @Test(arguments: [false, true])
    func anInterruptedShadowCopyContinuesAndLeavesNoShadow(restart: Bool) throws {
        let shadows = "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'orchestrator_online_shadow_%'"
        try Self.interruptThenFinish(restart: restart, stop: { blocker, event in
            guard event.kind == .rows, event.phase?.hasPrefix("copy the rows of animal that stay") == true, event.rowsDone >= 100 else { return false }
            let shadow = try blocker.execute("\(unsafeRaw: shadows)").rows.first?[0] ?? nil
            try blocker.execute("BEGIN; LOCK TABLE \(ident: S.store, shadow ?? "none") IN SHARE MODE")
            return true
        }, unfinished: { _, connection in
            let progress = try connection.execute("SELECT next_key FROM orchestrator.online_progress WHERE store = 'shop'")
            #expect(progress.int(0, "next_key").map { $0 > 1 } == true, "the checkpoint keeps the batches' position")
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_%' ORDER BY 1").rows.compactMap { $0[0] }
            #expect(left.map { String($0.prefix(25)) } == ["orchestrator_online_move_", "orchestrator_online_stay_"] + Array(repeating: "orchestrator_online_trunc", count: 2), "the triggers stay while the step is unfinished")
            #expect(try connection.execute("\(unsafeRaw: shadows)").rows.count == 1)
        })
    }

    /// Runs `apply --online` of the moved entity while the application writes, until `stop`
    /// (given a second connection and each progress event) takes a lock that makes it fail;
    /// checks the store stayed at v1 (and what `unfinished` checks) while the application
    /// keeps writing, then finishes with plain `apply` (`--restart` if asked): the store ends
    /// as offline, with no trigger or shadow left.
    static func interruptThenFinish(
        _ model: VersionedModel? = nil, write: @escaping TwinWriter.Write = Self.writeAnimals,
        restart: Bool = false, allowDataLoss: Bool = false, stop: @escaping (PostgresConnection, ProgressEvent) throws -> Bool,
        unfinished: (StepFailure?, PostgresConnection) throws -> Void
    ) throws {
        let model = try model ?? Self.movedEntity()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: write) { connection, writer, _ in
            var stopped = false
            let failure = try writer.interruptedOnlineApply(model, .atProgress { blocker, event in
                if !stopped { stopped = (try? stop(blocker, event)) == true }
            }, allowDataLoss: allowDataLoss, on: connection)
            #expect(stopped, "the run was not stopped where the test meant to")
            #expect(try S.version(on: connection) == "v1")
            try unfinished(failure, connection)
            writer.expectWritesWhileUnfinished()
            // A lock timeout past deadlock_timeout (1 s): an autovacuum of a table the finishing
            // run needs then gives way to it (PostgreSQL cancels it only after that long).
            _ = try StoreMigrator(connection: connection, model: model, store: S.store)
                .apply(options: ApplyOptions(lockTimeoutMilliseconds: 2000, allowDataLoss: allowDataLoss, restart: restart, batchSize: 7))
            writer.stop()
            #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))")
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: allowDataLoss, on: connection)
            try Self.expectNoShadowLeft(on: connection)
        }
    }

    /// The step's online plan rebuilds the table the rows leave.
    static func expectRebuilt(_ model: VersionedModel, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
        #expect(step.phases?.phases.contains { $0.summary.hasPrefix("create orchestrator_online_shadow_") } == true, "no shadow planned", sourceLocation: sourceLocation)
    }

    static func expectNoShadowLeft(on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let left = try connection.execute("SELECT relname FROM pg_class WHERE relname LIKE 'orchestrator_online_%'").rows.compactMap { $0[0] }
        #expect(left == [], "left behind: \(left)", sourceLocation: sourceLocation)
    }

    /// Pie is removed: its rows are deleted, and the links to them from kept rows (a menu's
    /// special, whose foreign key cascades from the inverse's delete rule, so a link left would
    /// delete the menu with the pie; and a dessert's pairing in the
    /// same table) cleared.
    static func removedEntity() throws -> VersionedModel {
        let kept = """
            Dessert: {attributes: {name: string}, relationships: {pairing: {destination: Dessert}, menus: {destination: Menu, inverse: special, toMany: true, deleteRule: cascade}}}
            Cake: {parent: Dessert, attributes: {layers: int16}}
            Menu: {attributes: {title: string}, relationships: {special: {destination: Dessert, inverse: menus}}}
            """
        return try S.model([("v1", S.version(kept + "\nPie: {parent: Dessert, attributes: {crust: string}}")), ("v2", S.version(kept))])
    }

    /// First-version writes: pies inserted (the live store skips them, the step would delete
    /// them) and updated, links set to pies and to other rows, kept rows deleted.
    static func writeDesserts(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        // The sample rows: desserts 1-300, cakes 301-600, pies 601-900.
        let dessert = w.random(1...950), other = w.random(0...1) == 0 ? w.random(601...900) : w.random(1...950), menu = w.random(1...330)
        // FOR KEY SHARE, as an application holding the row would: without it, a pie the step
        // deletes between the statement's snapshot and its foreign key check fails the write
        // (23503), the race the Limits name; with it, the link waits for the delete and reads
        // NULL, or the delete waits for the write, whose link the step's trigger then clears.
        let link: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "dessert") WHERE _pk = \(literal: other) FOR KEY SHARE)" }
        switch w.random(0...8) {
        case 0:
            try w.insert(into: "dessert", columns: ["_entity", "name"], values: { _ in "'Pie', 'apple'" }, on: connection)
        case 1:
            try w.insert(into: "dessert", columns: ["_entity", "name", "layers", "pairing_pk"], values: { "'Cake', 'sponge', 2, \(link($0))" }, on: connection)
        case 2:
            try w.both({ "UPDATE \(ident: $0, "dessert") SET name = name || '!', pairing_pk = \(link($0)) WHERE _pk = \(literal: dessert)" }, on: connection)
        case 3:
            // Not a pie: once the step has deleted a pie, deleting it again acts on nothing, where
            // offline it would cascade to the menus that linked to it (docs/online-migrations.md,
            // Limits; before that, the cleared links keep their rule: OnlineClearedLinkRuleTests).
            try w.both({ "DELETE FROM \(ident: $0, "dessert") WHERE _pk = \(literal: dessert) AND _entity <> 'Pie'" }, on: connection)
        case 4, 5, 6:
            try w.both({ "UPDATE \(ident: $0, "menu") SET title = title || '~', special_pk = \(link($0)) WHERE _pk = \(literal: menu)" }, on: connection)
        case 7:
            try w.both({ "DELETE FROM \(ident: $0, "menu") WHERE _pk = \(literal: menu)" }, on: connection)
        default:
            try w.insert(into: "menu", columns: ["_entity", "title", "special_pk"], values: { "'Menu', 'lunch', \(link($0))" }, on: connection)
        }
    }

    @Test func rowsOfARemovedEntityAreDeletedAndTheLinksToThemClearedWhileTheApplicationWrites() throws {
        let model = try Self.removedEntity()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writeDesserts) { connection, writer, _ in
            // Online asks for the same consent as offline, before anything changes.
            let offline = #expect(throws: DataLossNotAllowed.self) { try StoreMigrator(connection: connection, model: model, store: S.store).apply() }
            let online = #expect(throws: DataLossNotAllowed.self) {
                try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(online: true))
            }
            #expect(online?.losses == offline?.losses && online?.losses.isEmpty == false)
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dessert WHERE _entity = 'Pie'").int(0, "n") == 300)

            try Self.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }

    /// Alpha is renamed Zeta, which moves the one-to-one's column from Alpha's table to
    /// Beta's (the side that sorts first holds it).
    static func oneToOneSides() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Alpha: {attributes: {name: string}, relationships: {partner: {destination: Beta, inverse: alpha}}}
                Beta: {attributes: {name: string}, relationships: {alpha: {destination: Alpha, inverse: partner}}}
                """)),
            ("v2", S.version("""
                Zeta: {renamingIdentifier: Alpha, attributes: {name: string}, relationships: {partner: {destination: Beta, inverse: alpha}}}
                Beta: {attributes: {name: string}, relationships: {alpha: {destination: Zeta, inverse: partner}}}
                """)),
        ])
    }

    /// First-version writes, keeping the relationship one-to-one as Core Data does (a beta's
    /// former alpha lets go first): links set, moved and cleared, rows inserted and deleted on
    /// both sides. Alpha's table takes its new name at its phase: the application finds it.
    static func writePartners(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        let live = try connection.execute("SELECT to_regclass(\(quoteIdentifier(w.live) + ".zeta")) IS NOT NULL AS renamed").rows.first?.first == "t" ? "zeta" : "alpha"
        let alphas: (String) -> String = { $0 == w.live ? live : "alpha" }
        let alpha = w.random(1...330), beta = w.random(1...330)
        let partner: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "beta") WHERE _pk = \(literal: beta))" }
        let letGo: (String) -> SQL = { "UPDATE \(ident: $0, alphas($0)) SET partner_pk = NULL WHERE partner_pk = \(literal: beta)" }
        switch w.random(0...6) {
        case 0, 1, 2:
            try w.both(letGo, on: connection)
            try w.both({ "UPDATE \(ident: $0, alphas($0)) SET name = name || '!', partner_pk = \(partner($0)) WHERE _pk = \(literal: alpha)" }, on: connection)
        case 3:
            try w.both({ "UPDATE \(ident: $0, alphas($0)) SET partner_pk = NULL WHERE _pk = \(literal: alpha)" }, on: connection)
        case 4:
            try w.both(letGo, on: connection)
            try w.insert(into: "alpha", liveTable: live, columns: ["_entity", "name", "partner_pk"], values: { "'Alpha', 'new', \(partner($0))" }, on: connection)
        case 5:
            let side = w.random(0...1)
            try w.both({ "DELETE FROM \(ident: $0, side == 0 ? alphas($0) : "beta") WHERE _pk = \(literal: alpha)" }, on: connection)
        default:
            try w.insert(into: "beta", columns: ["_entity", "name"], values: { _ in "'Beta', 'b'" }, on: connection)
        }
    }

    @Test func aOneToOneWhoseColumnChangesSidesKeepsEveryLinkWrittenWhileItMoves() throws {
        let model = try Self.oneToOneSides()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: Self.writePartners) { connection, writer, _ in
            let linked = try connection.execute("SELECT count(*) AS n FROM shop.alpha WHERE partner_pk IS NOT NULL").int(0, "n")!
            #expect(linked > 100)
            try Self.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            // Some links kept, each compared with the offline migration's above; not "more than
            // 100": the writer deletes rows and their links, more the longer a loaded run lasts.
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.beta WHERE alpha_pk IS NOT NULL").int(0, "n")! > 0, "no link kept")
        }
    }

    /// Runs `apply --online` while `writer` writes, and checks it wrote meanwhile, unharmed.
    static func migrateWhileWriting(
        _ model: VersionedModel, writer: TwinWriter, allowDataLoss: Bool = false, on connection: PostgresConnection,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
        #expect(step.phases?.refusals == [], sourceLocation: sourceLocation)
        writer.start()
        writer.waitForCommits(5)
        let before = writer.commits
        // A lock timeout of 5 s, not 500 ms: the writer writes without pause, taking a join table
        // and the table its key points at in either order (a link inserted, an animal deleted with
        // its links), so a phase's ACCESS EXCLUSIVE locks can meet it the other way round; past
        // PostgreSQL's deadlock_timeout (1 s) one side is aborted and tried again. With 500 ms,
        // each of the switch-over's 10 attempts timed out first on a loaded CI machine once, and
        // apply stopped as documented ("run apply again to continue"), which this test is not about.
        var options = ApplyOptions(allowDataLoss: allowDataLoss, batchSize: 7, online: true)
        options.lockTimeoutMilliseconds = 5000
        let report = try StoreMigrator(connection: connection, model: model, store: S.store)
            .apply(options: options, onProgress: { writer.interleave($0, untilCommitted: 20, since: before) })
        let during = writer.commits - before
        writer.stop()
        print("online migration: \(during) writer transactions committed while apply --online ran, \(writer.commits) in all")
        #expect(report.appliedSteps.count == 1, sourceLocation: sourceLocation)
        #expect(during >= 20, "the writer barely wrote during the migration: the test proves little", sourceLocation: sourceLocation)
        #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))", sourceLocation: sourceLocation)
    }
}
