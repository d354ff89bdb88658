import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A parent's many-to-many moved down to two sub-entities (Dessert.tags becomes Cake.tags and
/// Pie.tags): each sub-entity's links land in its own join table, Dessert's own are dropped
/// (a data loss the step names), on a store holding rows.
/// Proves Planning/Changes: FillJoinTable, DropTables.
@Suite(integration) struct LinksMovedDownMigrationTests {
    typealias S = MigratedStore

    /// Without inverse, or with `desserts` on Tag (`cakes` and `pies` in the second version);
    /// `ordered` keeps each dessert's tags in order.
    static func model(inverse: Bool, ordered: Bool = false) throws -> VersionedModel {
        let order = ordered ? ", ordered: true" : ""
        func tags(_ inverseName: String) -> String {
            inverse ? "tags: {destination: Tag, inverse: \(inverseName), toMany: true\(order)}" : "tags: {destination: Tag, toMany: true\(order)}"
        }
        return try S.model([
            ("v1", S.version("""
                Tag: {attributes: {name: string}\(inverse ? ", relationships: {desserts: {destination: Dessert, inverse: tags, toMany: true}}" : "")}
                Dessert: {attributes: {name: string}, relationships: {\(tags("desserts"))}}
                Cake: {parent: Dessert}
                Pie: {parent: Dessert}
                """)),
            ("v2", S.version("""
                Tag: {attributes: {name: string}\(inverse ? ", relationships: {cakes: {destination: Cake, inverse: tags, toMany: true}, pies: {destination: Pie, inverse: tags, toMany: true}}" : "")}
                Dessert: {attributes: {name: string}}
                Cake: {parent: Dessert, relationships: {\(tags("cakes"))}}
                Pie: {parent: Dessert, relationships: {\(tags("pies"))}}
                """)),
        ])
    }

    /// The links of `entity`'s rows in `dessert__tags` (with `columns` after the pair).
    static func links(of entity: String, _ columns: String = "", on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT l.dessert_pk, l.tags_pk\(unsafeRaw: columns) FROM shop.dessert__tags l JOIN shop.dessert d ON d._pk = l.dessert_pk \
            WHERE d._entity = \(literal: entity) ORDER BY 1, 2
            """).rows
    }

    static func expectLinksMovedDown(_ model: VersionedModel, ordered: Bool = false, online: Bool = false) throws {
        let order = ordered ? ", l.tags_order" : ""
        try S.withStore(model) { connection in
            let (cakes, pies, desserts) = try (links(of: "Cake", order, on: connection), links(of: "Pie", order, on: connection), links(of: "Dessert", on: connection))
            #expect(cakes.count > 100 && pies.count > 100 && !desserts.isEmpty, "\(cakes.count) \(pies.count) \(desserts.count)")
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan()
            let losses = plan.steps.flatMap(\.hazards).filter(\.isDataLoss).map(\.message)
            #expect(losses.contains("Dessert.tags removed: its links are dropped"), "\(losses)")
            #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            #expect(try S.version(on: connection) == "v1")
            _ = try StoreMigrator(connection: connection, model: model, store: S.store)
                .apply(options: ApplyOptions(allowDataLoss: true, batchSize: online ? 7 : ApplyOptions.defaultBatchSize, online: online))
            let order = ordered ? ", tags_order" : ""
            #expect(try connection.execute("SELECT cake_pk, tags_pk\(unsafeRaw: order) FROM shop.cake__tags ORDER BY 1, 2").rows == cakes)
            #expect(try connection.execute("SELECT pie_pk, tags_pk\(unsafeRaw: order) FROM shop.pie__tags ORDER BY 1, 2").rows == pies)
            #expect(try !tableExists(schema: S.store, table: "dessert__tags", on: connection))
            #expect(try S.version(on: connection) == "v2")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test(arguments: [false, true])
    func eachSubEntitysLinksLandInItsOwnJoinTable(inverse: Bool) throws {
        try Self.expectLinksMovedDown(Self.model(inverse: inverse))
    }

    @Test func orderedLinksKeepTheirPositions() throws {
        try Self.expectLinksMovedDown(Self.model(inverse: true, ordered: true), ordered: true)
    }

    @Test(arguments: [false, true])
    func onlineTheLinksLandAsOffline(ordered: Bool) throws {
        try Self.expectLinksMovedDown(Self.model(inverse: false, ordered: ordered), ordered: ordered, online: true)
    }

    /// Only Cake keeps the tags: the join table is not renamed over Pie's and Dessert's links.
    @Test func aSingleSubEntityTakesOnlyItsOwnLinks() throws {
        let model = try S.model([
            ("v1", S.version("Tag: {attributes: {name: string}}\nDessert: {attributes: {name: string}, relationships: {tags: {destination: Tag, toMany: true}}}\nCake: {parent: Dessert}\nPie: {parent: Dessert}")),
            ("v2", S.version("Tag: {attributes: {name: string}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, relationships: {tags: {destination: Tag, toMany: true}}}\nPie: {parent: Dessert}")),
        ])
        try S.withStore(model) { connection in
            let (cakes, pies) = try (Self.links(of: "Cake", on: connection), Self.links(of: "Pie", on: connection))
            #expect(cakes.count > 100 && !pies.isEmpty)
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try connection.execute("SELECT cake_pk, tags_pk FROM shop.cake__tags ORDER BY 1, 2").rows == cakes)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
