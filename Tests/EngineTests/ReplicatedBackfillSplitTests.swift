import ObjectModel
import SQLBuilding
import Testing
@testable import Engine
@testable import Planning

/// How `apply --subscriber` splits a lightweight step that writes published rows around the
/// publisher's (`ReplicatedBackfill.split`, from Planning's `SubscriberSplit(step, published:)`):
/// added columns first, the replicated writes never, the rest last; a step no order keeps
/// fitting is refused with the stable code. The parts come from the changes, never the SQL text.
@Suite("ReplicatedBackfill.split")
struct ReplicatedBackfillSplitTests {
    static func column(_ name: String, nullable: Bool = true, defaultValue: DefaultValue? = nil) -> ColumnLayout {
        ColumnLayout(name: name, type: "text", isNullable: nullable, defaultValue: defaultValue, isIdentity: false, role: .attribute(entity: "Item", name: name))
    }

    static let addNote = AddColumn(table: "item", column: column("note"))
    static let backfill = BackfillNulls(table: "item", column: "name", value: "'unnamed'", entities: nil)
    static let required = SetNotNull(table: "item", column: "name", scansRows: true)
    static let dropSku = DropColumn(table: "item", column: "sku", reason: .removed)

    static func step(_ changes: [any SchemaChange]) -> PlannedStep {
        LightweightMigration.step(changes, from: "Stock 1", to: "Stock 2", schema: "stock").planned(for: .offline, continuesOnlineRun: false)
    }

    static func texts(_ changes: [any SchemaChange]) -> [String] {
        changes.flatMap { $0.statements(in: "stock") }.map(\.sql.text)
    }

    static func split(
        _ changes: [any SchemaChange], published: Set<String> = ["item"], options: ApplyOptions = ApplyOptions()
    ) throws -> (additive: [String], replicated: [String], rest: [String])? {
        try ReplicatedBackfill.split(step(changes), published: published, options: options).map {
            ($0.additive.map(\.sql.text), $0.split.replicated.map(\.sql.text), $0.split.rest.map(\.sql.text))
        }
    }

    @Test("a backfill with an added and a dropped column: the column first, the backfill replicated, the drop and NOT NULL last")
    func splitsAroundTheBackfill() throws {
        let parts = try #require(try Self.split([Self.addNote, Self.backfill, Self.required, Self.dropSku]))
        #expect(parts.additive == Self.texts([Self.addNote]))
        #expect(parts.replicated == Self.texts([Self.backfill]))
        #expect(parts.rest == Self.texts([Self.required, Self.dropSku]))
    }

    @Test("a step writing no published row and dropping no published column is not split", arguments: [
        [ReplicatedBackfillSplitTests.addNote, ReplicatedBackfillSplitTests.dropSku] as [any SchemaChange],
        [ReplicatedBackfillSplitTests.backfill],
        [ReplicatedBackfillSplitTests.addNote],
    ])
    func notSplit(changes: [any SchemaChange]) throws {
        // Published or not, an added column alone is not split; the others are on unpublished tables.
        let published: Set<String> = changes.count == 1 && changes[0] is AddColumn ? ["item"] : ["other"]
        #expect(try Self.split(changes, published: published) == nil)
    }

    @Test("a step dropping a published column is split like a backfill: its added columns first, the drop last, after the publisher's rows arrived")
    func dropOfAPublishedColumnLast() throws {
        let parts = try #require(try Self.split([Self.addNote, Self.dropSku]))
        #expect(parts.additive == Self.texts([Self.addNote]))
        #expect(parts.replicated.isEmpty)
        #expect(parts.rest == Self.texts([Self.dropSku]))
    }

    @Test("a drop of a published column beside a rename is refused with replicationUnorderedDrop; with --allow-unordered-drop it is not split (subscriptions disabled around both sides)")
    func dropBesideARenameNeedsConsent() throws {
        let rename = RenameColumn(table: "item", from: "price", to: "cost")
        let error = #expect(throws: ReplicatedApplyRefused.self) { try Self.split([rename, Self.dropSku]) }
        #expect(error?.reason.hasPrefix("(replicationUnorderedDrop) ") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("--allow-unordered-drop") == true && error?.reason.contains("Nothing was changed") == true)
        var consent = ApplyOptions()
        consent.allowUnorderedDrop = true
        #expect(try Self.split([rename, Self.dropSku], options: consent) == nil)
    }

    @Test("the subscriber's remainder is the step without its first and replicated parts, run in place, under --online too")
    func remainderRunsInPlace() throws {
        let online = LightweightMigration.step([Self.addNote, Self.backfill, Self.required, Self.dropSku], from: "Stock 1", to: "Stock 2", schema: "stock")
            .planned(for: .online, continuesOnlineRun: false)
        let split = try #require(SubscriberSplit(online, published: ["item"]))
        let remaining = try #require(split.remaining)
        #expect(remaining.body == .inPlace)
        #expect(remaining.statements.map(\.sql.text) == Self.texts([Self.required, Self.dropSku]))
        #expect(remaining.subscriberParts == [.last, .drops(table: "item")])
        #expect((remaining.from, remaining.to) == ("Stock 1", "Stock 2"))
    }

    @Test("a write to a table the publisher does not publish runs on the subscriber, in the step's order")
    func unpublishedWriteLast() throws {
        let other = BackfillNulls(table: "tag", column: "label", value: "''", entities: nil)
        let parts = try #require(try Self.split([Self.backfill, other, Self.dropSku]))
        #expect(parts.replicated == Self.texts([Self.backfill]))
        #expect(parts.rest == Self.texts([other, Self.dropSku]))
    }

    @Test("a column added NOT NULL without a default is added first as nullable: its NOT NULL comes last, after the rows arrived")
    func requiredColumnLast() throws {
        let code = AddColumn(table: "item", column: Self.column("code", nullable: false))
        let notNull = SetNotNull(table: "item", column: "code", scansRows: true)
        let parts = try #require(try Self.split([code, Self.backfill, notNull]))
        #expect(parts.additive == [#"ALTER TABLE "stock"."item" ADD COLUMN "code" text"#])
        #expect(parts.rest == Self.texts([notNull]))
    }

    @Test("a column added NOT NULL with a default is added first: old rows fit it")
    func defaultedColumnFirst() throws {
        let flag = AddColumn(table: "item", column: Self.column("flag", nullable: false, defaultValue: .string("x")))
        let parts = try #require(try Self.split([flag, Self.backfill]))
        #expect(parts.additive == Self.texts([flag]))
        #expect(parts.additive.first?.contains(" NOT NULL DEFAULT ") == true)
        let added = try #require(SubscriberSplit(Self.step([flag, Self.backfill]), published: ["item"])?.addedColumns.first)
        #expect(added.isWritten.text == #"SELECT EXISTS (SELECT 1 FROM "stock"."item" WHERE "flag" IS DISTINCT FROM ('x')) AS written"#)
    }

    @Test("a rename, a table dropped or a type change beside a backfill is refused with replicationDataWrites", arguments: [
        RenameColumn(table: "item", from: "name", to: "title") as any SchemaChange,
        DropTables(tables: ["tag"], isLossy: true),
        AlterColumnType(table: "item", column: "price", from: "real", to: "double precision"),
    ])
    func unorderableRefused(change: any SchemaChange) throws {
        let text = try #require(Self.texts([change]).last)
        let error = #expect(throws: ReplicatedApplyRefused.self) { try Self.split([Self.backfill, change]) }
        #expect(error?.reason.hasPrefix("(replicationDataWrites) ") == true)
        #expect(error?.reason.contains(text) == true)
        #expect(error?.reason.contains("Nothing was changed") == true)
    }

    static let createJoin = AddTable(table: TableLayout(
        name: "item_tag", kind: .hierarchy(root: "ItemTag"), entities: ["ItemTag"], columns: [column("label")], primaryKey: ["_pk"], checks: [], foreignKeys: [], uniqueConstraints: [],
        indexes: []
    ))
    /// A write of the new table's rows: the split goes by the part (`writes`), as a join table's fill.
    static let fillJoin = BackfillNulls(table: "item_tag", column: "label", value: "''", entities: nil)
    static let dropLink = DropColumn(table: "item", column: "tag_pk", reason: .removed)

    @Test("a table created beside a drop of a published column (a to-one made to-many): created first on every side, its fill replicated, the column dropped last")
    func createdTableFirst() throws {
        let step = Self.step([Self.createJoin, Self.fillJoin, Self.dropLink])
        for schemaPublished in [true, false] {
            // A FOR TABLE list publishing item takes the new table too (the links leave its column).
            let split = try #require(SubscriberSplit(step, published: ["item"], schemaPublished: schemaPublished))
            #expect(split.createdFirst.map(\.sql.text) == Self.texts([Self.createJoin]) && split.createdTables == ["item_tag"])
            #expect(split.publishesCreated && split.droppedFrom == ["item"])
            #expect(split.replicated.map(\.sql.text) == Self.texts([Self.fillJoin]))
            #expect(split.rest.map(\.sql.text) == Self.texts([Self.dropLink]))
            #expect(split.unorderable == nil)
            let publisher = try #require(split.publisherRemaining)
            #expect(publisher.body == .inPlace && publisher.statements.map(\.sql.text) == Self.texts([Self.fillJoin, Self.dropLink]))
        }
        #expect(try ReplicatedBackfill.split(step, published: ["item"], options: ApplyOptions()) != nil)
    }

    @Test("under --online the publisher's step keeps its phases, the one creating the published table left empty; its fill may replicate, a backfill of an existing table may not")
    func createdTableOnline() throws {
        let online = LightweightMigration.step([Self.createJoin, Self.fillJoin, Self.dropLink], from: "Stock 1", to: "Stock 2", schema: "stock")
            .planned(for: .online, continuesOnlineRun: false)
        let split = try #require(SubscriberSplit(online, published: ["item"], schemaPublished: true))
        let publisher = try #require(split.publisherRemaining)
        let (before, after) = (try #require(online.phases?.phases), try #require(publisher.phases?.phases))
        #expect(after.count == before.count)
        #expect(before.flatMap(\.statements).filter { !after.flatMap(\.statements).contains($0) } == split.createdFirst)
        #expect(publisher.digest == online.digest)
        var options = ApplyOptions()
        options.online = true
        #expect(try ReplicatedBackfill.split(online, published: ["item"], schemaPublished: true, options: options) != nil)
        let backfill = LightweightMigration.step([Self.createJoin, Self.fillJoin, Self.backfill, Self.dropLink], from: "Stock 1", to: "Stock 2", schema: "stock")
            .planned(for: .online, continuesOnlineRun: false)
        #expect(throws: ReplicatedApplyRefused.self) { try ReplicatedBackfill.split(backfill, published: ["item"], schemaPublished: true, options: options) }
    }

    @Test("a table created beside a backfill, no drop and the schema unpublished: no publication takes it, so it is created first and filled on the subscriber; the publisher runs its step whole")
    func createdTableNotPublished() throws {
        let split = try #require(SubscriberSplit(Self.step([Self.createJoin, Self.fillJoin, Self.backfill]), published: ["item"]))
        #expect(!split.publishesCreated && split.publisherRemaining == nil)
        #expect(split.createdTables == ["item_tag"])
        #expect(split.replicated.map(\.sql.text) == Self.texts([Self.backfill]))
        #expect(split.rest.map(\.sql.text) == Self.texts([Self.fillJoin]))
    }

    @Test("every statement of a planned lightweight step has its part", arguments: [
        [ReplicatedBackfillSplitTests.addNote, ReplicatedBackfillSplitTests.backfill, ReplicatedBackfillSplitTests.required, ReplicatedBackfillSplitTests.dropSku] as [any SchemaChange],
    ])
    func onePartPerStatement(changes: [any SchemaChange]) {
        let step = Self.step(changes)
        #expect(step.subscriberParts.dropFirst() == [.writes(table: "item"), .last, .drops(table: "item")])
        guard case .addedFirst(let added) = step.subscriberParts.first else {
            Issue.record("\(step.subscriberParts)")
            return
        }
        #expect(added.table == "item" && added.column == "note")
        #expect(added.drop.sql.text == #"ALTER TABLE "stock"."item" DROP COLUMN "note""#)
        #expect(added.isWritten.text == #"SELECT EXISTS (SELECT 1 FROM "stock"."item" WHERE "note" IS NOT NULL) AS written"#)
        #expect(step.subscriberParts.count == step.statements.count)
    }
}
