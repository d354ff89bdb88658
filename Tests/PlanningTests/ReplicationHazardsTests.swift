import Mapping
import ObjectModel
import Testing
@testable import Planning

/// Issue 24: what a step does to the store's replication, from the topology the snapshot read.
struct ReplicationHazardsTests {
    static func layout(_ yaml: String) throws -> StoreLayout {
        StoreLayout(version: try NativeModelLoader.parseVersion(yaml, name: "v", file: "v.yaml"), schema: "shop")
    }

    static let before = """
        entities:
          Item: {attributes: {name: string, note: string}}
          Shelf: {attributes: {label: string}}
        """
    static let after = """
        entities:
          Item: {attributes: {name: string, sku: string}}
        """

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        var kind: PlannedStep.Kind
        var topology: ReplicationTopology
        /// A lightweight step's changes (its statements and subscriber parts come from them).
        var changes: [any SchemaChange] = []
        var codes: [String]
    }

    static let list = ReplicationTopology.Publication(name: "p", form: .tableList, tables: ["item", "shelf"])
    static let cases: [Case] = [
        Case(description: "nothing replicated: no hazard", kind: .heavyweight, topology: ReplicationTopology(), codes: []),
        Case(
            description: "a FOR TABLE publication through a heavyweight step", kind: .heavyweight, topology: ReplicationTopology(publications: [list]),
            codes: [ReplicationHazards.membershipCarried, ReplicationHazards.membershipLost, ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast]
        ),
        Case(
            description: "FOR TABLES IN SCHEMA loses nothing by name", kind: .heavyweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .tablesInSchema, tables: ["item", "shelf"])]),
            codes: [ReplicationHazards.membershipCarried, ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast]
        ),
        Case(
            description: "FOR ALL TABLES and a heavyweight step", kind: .heavyweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .allTables, tables: ["item"])]),
            codes: [ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast, ReplicationHazards.allTables]
        ),
        Case(
            description: "a lightweight backfill of a published table, a standby", kind: .lightweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["item"])], standbys: [.init(name: "s1", state: "streaming", replayLagSeconds: 0)]),
            changes: [
                AddColumn(table: "item", column: ColumnLayout(name: "sku", type: "text", isNullable: true, defaultValue: nil, isIdentity: false, role: .attribute(entity: "Item", name: "sku"))),
                BackfillNulls(table: "item", column: "sku", value: "''", entities: nil),
            ],
            codes: [ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast, ReplicationHazards.dataWrites, ReplicationHazards.standbyLocks]
        ),
        Case(
            description: "a backfill of a table no publication publishes writes nothing that replicates", kind: .lightweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["shelf"])]),
            changes: [BackfillNulls(table: "item", column: "sku", value: "''", entities: nil)],
            codes: [ReplicationHazards.membershipLost]
        ),
        Case(
            description: "a published column dropped beside a renamed one needs consent", kind: .lightweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["item"])]),
            changes: [RenameColumn(table: "item", from: "name", to: "title"), DropColumn(table: "item", column: "note", reason: .removed)],
            codes: [ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast, ReplicationHazards.unorderedDrop]
        ),
        Case(
            description: "a published column dropped beside a table created (a to-one made to-many) is ordered: no consent", kind: .lightweight,
            topology: ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["item"])]),
            changes: [
                AddTable(table: TableLayout(name: "item_tag", kind: .hierarchy(root: "ItemTag"), entities: ["ItemTag"], columns: [], primaryKey: ["_pk"], checks: [], foreignKeys: [], uniqueConstraints: [], indexes: [])),
                DropColumn(table: "item", column: "note", reason: .removed),
            ],
            codes: [ReplicationHazards.columnsAddedFirst, ReplicationHazards.columnsDroppedLast]
        ),
        Case(
            description: "the store is a subscription target", kind: .heavyweight,
            topology: ReplicationTopology(subscriptions: [.init(name: "s", isEnabled: true, tables: ["item"])]),
            codes: [ReplicationHazards.subscriptionCarried, ReplicationHazards.subscriptionTarget]
        ),
    ]

    @Test(arguments: cases)
    func hazards(of rule: Case) throws {
        let step = rule.kind == .heavyweight
            ? PlannedStep(body: .staged(.sample()), from: "v1", to: "v2", statements: [])
            : LightweightMigration.step(rule.changes, from: "v1", to: "v2", schema: "shop").planned(for: .offline, continuesOnlineRun: false)
        let hazards = ReplicationHazards.hazards(of: step, source: try Self.layout(Self.before), destination: try Self.layout(Self.after), topology: rule.topology)
        #expect(hazards.map(\.code) == rule.codes)
        #expect(hazards.allSatisfy { ReplicationHazards.codes.contains($0.code) })
    }

    @Test func workTablesOfAnOnlineStepAreAHazardUnderASchemaPublication() throws {
        let log = PlannedStatement("CREATE TABLE IF NOT EXISTS \"shop\".\"_log\" (\"_pk\" bigint PRIMARY KEY)", lock: .accessExclusive, summary: "log")
        let step = PlannedStep(
            body: .phased(OnlinePlan(phases: [OnlinePhase(summary: "install", statements: [log], lock: .accessExclusive, hold: .instant)], refusals: [])),
            from: "v1", to: "v2", statements: []
        )
        let (source, destination) = (try Self.layout(Self.before), try Self.layout(Self.before))
        let schema = ReplicationTopology(publications: [.init(name: "p", form: .tablesInSchema, tables: ["item"])])
        let hazards = ReplicationHazards.hazards(of: step, source: source, destination: destination, topology: schema)
        #expect(hazards.map(\.code) == [ReplicationHazards.workTables])
        #expect(hazards.first?.message.hasPrefix("under apply --online the step creates shop._log: ") == true)
        let list = ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["item"])])
        #expect(ReplicationHazards.hazards(of: step, source: source, destination: destination, topology: list).isEmpty)
    }

    @Test func columnsAreNamedWithTheirTables() throws {
        let step = PlannedStep(body: .staged(.sample()), from: "v1", to: "v2", statements: [])
        let hazards = ReplicationHazards.hazards(
            of: step, source: try Self.layout(Self.before), destination: try Self.layout(Self.after), topology: ReplicationTopology(publications: [Self.list])
        )
        #expect(hazards.first { $0.code == ReplicationHazards.columnsAddedFirst }?.message.hasPrefix("published columns shop.item.sku are new") == true)
        #expect(hazards.first { $0.code == ReplicationHazards.columnsDroppedLast }?.message.hasPrefix("published columns shop.item.note go") == true)
        #expect(hazards.first { $0.code == ReplicationHazards.membershipLost }?.message.hasPrefix("publication p publishes shop.shelf, which the step removes") == true)
    }

    @Test func aTableAHeavyweightStepRenamesIsCarriedToItsNewNameInAForTablePublication() throws {
        let source = "Chef: {attributes: {name: string}}\nShelf: {attributes: {label: string}}\nBin: {attributes: {label: string}}"
        let destination = "Cook: {attributes: {name: string}}\nShelf: {attributes: {label: string}}"
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "ChefToCook", type: .transform, sourceEntity: "Chef", destinationEntity: "Cook"),
            EntityMappingDefinition(name: "ShelfToShelf", type: .copy, sourceEntity: "Shelf", destinationEntity: "Shelf"),
        ], file: "rename.yaml")
        let (from, to) = (try HeavyweightMigrationTests.version("v1", source), try HeavyweightMigrationTests.version("v2", destination))
        let step = try HeavyweightMigration.step(mapping: mapping, from: from, to: to, schema: "shop")
        // Bin has no entity mapping (its rows stay behind); Shelf keeps its name.
        #expect(step.staged?.renamedTables == ["chef": ["cook"]])
        let topology = ReplicationTopology(publications: [.init(name: "p", form: .tableList, tables: ["bin", "chef", "shelf"])])
        let hazards = ReplicationHazards.hazards(
            of: step, source: StoreLayout(version: from, schema: "shop"), destination: StoreLayout(version: to, schema: "shop"), topology: topology
        ).filter { $0.code.hasPrefix("replicationMembership") }
        #expect(hazards.map(\.message) == [
            "publication p publishes shop.shelf, which the step replaces: the new tables take their place in it in the swap's transaction",
            "publication p publishes shop.chef (replaced by shop.cook): the new tables, of other names, take their place in it in the swap's transaction",
            "publication p publishes shop.bin, which the step removes: it leaves the publication (its rows go with the removal, as --allow-data-loss says)",
        ])
    }

    @Test func aTableALightweightStepRenamesInPlaceStaysInAForTablePublication() throws {
        let rename = PlannedStatement("ALTER TABLE \"shop\".\"shelf\" RENAME TO \"rack\"", lock: .accessExclusive, summary: "rename table shelf -> rack")
        let step = PlannedStep(body: .inPlace, from: "v1", to: "v2", statements: [rename])
        let (source, destination) = (try Self.layout(Self.before), try Self.layout("entities:\n  Item: {attributes: {name: string, note: string}}\n  Rack: {attributes: {label: string}}\n"))
        let hazards = ReplicationHazards.hazards(of: step, source: source, destination: destination, topology: ReplicationTopology(publications: [Self.list]))
        #expect(hazards.map(\.code) == [ReplicationHazards.membershipCarried])
        #expect(hazards.first?.message == "publication p publishes shop.shelf (renamed shop.rack): a table renamed in place stays in it under its new name")
    }

    @Test func aSubscriptionStillCopyingIsOneBlockerNamingItsTables() {
        let topology = ReplicationTopology(subscriptions: [
            .init(name: "s", isEnabled: true, tables: ["item", "shelf"], syncing: ["shelf": "d", "item": "f"]),
            .init(name: "ready", isEnabled: true, tables: ["item"]),
        ])
        let blockers = topology.syncBlockers(store: "shop")
        #expect(blockers.map(\.code) == [.subscriptionSyncing])
        #expect(blockers.first?.message.hasPrefix("subscription s has not finished its first copy of shop.item (state f), shop.shelf (state d): ") == true)
        #expect(topology.lines.first == "subscription s writes into: item, shelf (first copy not finished: item, shelf)")
        #expect(ReplicationTopology(subscriptions: [.init(name: "ready", isEnabled: false, tables: ["item"])]).syncBlockers(store: "shop").isEmpty)
    }
}
