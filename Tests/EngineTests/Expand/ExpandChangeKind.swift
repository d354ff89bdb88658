import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The changes of issue 25 (point 2) that the old version's views translate, each with the two
/// releases that write through it (`ExpandChangeKindWritersTests`): the old one by v1's names
/// through `"shop@v1"`, the new one by v2's on the store's tables; the twin (`shadow`, left at
/// v1) gets every write alike, in v1's shape. Writes the twin cannot hold in v1's shape (a
/// second link of a to-one made to-many, a row of an entity v1 does not know) are not made.
enum ExpandChangeKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case requiredWithDefault, toOneMadeToMany, unorderedMadeOrdered, orderedMadeUnordered, movedBelowANewParent, rootGivenAParent

    typealias S = MigratedStore
    static let shadow: SQL = "\(ident: ExpandApplyTests.shadow)."
    static let store: SQL = "\(ident: S.store)."
    /// The old release's names, found through its `search_path`.
    static let unqualified = SQL(unsafeRaw: "")

    var description: String { rawValue }

    func model() throws -> VersionedModel {
        let chef = OldVersionLinkViewTests.chefAndRecipes
        switch self {
        case .requiredWithDefault:
            return try S.model([
                ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
                ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 3}}}")),
            ])
        case .toOneMadeToMany:
            return try S.model([("v1", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true")),
                                ("v2", chef("destination: Chef, inverse: recipes, toMany: true", "destination: Recipe, inverse: chef, toMany: true"))])
        case .unorderedMadeOrdered:
            return try S.model([("v1", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true")),
                                ("v2", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true, ordered: true"))])
        case .orderedMadeUnordered:
            return try S.model([("v1", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true, ordered: true")),
                                ("v2", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true"))])
        case .movedBelowANewParent:
            return try S.model([
                ("v1", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
                ("v2", S.version("Dessert: {attributes: {name: string}}\nBaked: {parent: Dessert, attributes: {oven: int16}}\nCake: {parent: Baked, attributes: {layers: int16}}")),
            ])
        case .rootGivenAParent:
            return try S.model([
                ("v1", S.version("Cake: {attributes: {name: string, layers: int16}}")),
                ("v2", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
            ])
        }
    }

    /// What the old version's view `table` must read after `apply --expand`: `columns` of the
    /// view, against the twin's `twinColumns` (v1's values as the new store holds them).
    var compared: (table: String, columns: [String], twinColumns: [SQL]) {
        switch self {
        case .requiredWithDefault: return ("recipe", ["_pk", "name", "rating"], ["_pk", "name", "coalesce(rating, 3)"])
        // The view counts an unordered one-to-many's positions by key: not what v1 wrote.
        case .toOneMadeToMany, .unorderedMadeOrdered, .orderedMadeUnordered: return ("recipe", ["_pk", "name", "chef_pk"], ["_pk", "name", "chef_pk"])
        case .movedBelowANewParent: return ("dessert", ["_pk", "_entity", "name", "layers"], ["_pk", "_entity", "name", "layers"])
        case .rootGivenAParent: return ("cake", ["_pk", "_entity", "name", "layers"], ["_pk", "_entity", "name", "layers"])
        }
    }

    /// The old release: v1's names, unqualified, with the views' schema first on its path (the
    /// store's tables until the views exist).
    func oldRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try connection.execute("SET LOCAL search_path = \(ident: ExpandApplyTests.views), \(ident: S.store)")
        try ExpandApplyTests.releasesTakeTurns(connection)
        let key = writer.random(1...400), value = writer.random(1...5), choice = writer.random(0...3)
        switch self {
        case .requiredWithDefault:
            // A NULL rating half the time: the views write v2's default for it.
            let rating: SQL = value > 2 ? "\(literal: value)" : "NULL"
            try Self.write(choice, key: key, table: "recipe", writer, connection,
                           insert: ("_entity, name, rating", { _ in "'Recipe', 'old', \(rating)" }),
                           update: { _ in "name = name || '+', rating = \(rating)" })
        case .toOneMadeToMany, .unorderedMadeOrdered, .orderedMadeUnordered:
            let chef = { (schema: SQL) -> SQL in "(SELECT _pk FROM \(schema)chef WHERE _pk = \(literal: value * 37 % 300 + 1))" }
            let order: SQL = self == .orderedMadeUnordered ? ", chef_order = \(literal: value)" : ""
            try Self.write(choice, key: key, table: "recipe", writer, connection,
                           insert: ("_entity, name, chef_pk", { "'Recipe', 'old', \(chef($0))" }),
                           update: { "name = name || '+', chef_pk = \(chef($0))\(order)" })
        case .movedBelowANewParent:
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'old', \(unsafeRaw: entity == "Cake" ? String(value) : "NULL")" }),
                           update: { _ in "name = name || '+', layers = CASE WHEN _entity = 'Cake' THEN \(literal: value) END" })
        case .rootGivenAParent:
            try Self.write(choice, key: key, table: "cake", writer, connection,
                           insert: ("_entity, name, layers", { _ in "'Cake', 'old', \(literal: value)" }),
                           update: { _ in "name = name || '+', layers = \(literal: value)" })
        }
    }

    /// The new release: v2's names on the store's tables; the twin gets the same in v1's shape.
    func newRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try ExpandApplyTests.releasesTakeTurns(connection)
        let key = writer.random(1...400), value = writer.random(1...5), choice = writer.random(0...3)
        let (store, shadow) = (Self.store, Self.shadow)
        switch self {
        case .requiredWithDefault:
            try Self.write(choice, key: key, table: "recipe", writer, connection, live: store,
                           insert: ("_entity, name, rating", { _ in "'Recipe', 'new', \(literal: value)" }),
                           update: { _ in "name = name || '*', rating = \(literal: value)" })
        case .toOneMadeToMany:
            let chef = value * 53 % 300 + 1
            if choice == 1 {
                // The recipe's one link replaced: v1 holds one.
                try connection.execute("DELETE FROM \(store)chef__recipes WHERE recipes_pk = \(literal: key)")
                try connection.execute("""
                    INSERT INTO \(store)chef__recipes (chef_pk, recipes_pk) SELECT c._pk, r._pk FROM \(store)chef AS c, \(store)recipe AS r \
                    WHERE c._pk = \(literal: chef) AND r._pk = \(literal: key)
                    """)
                try connection.execute("UPDATE \(shadow)recipe SET chef_pk = (SELECT _pk FROM \(shadow)chef WHERE _pk = \(literal: chef)) WHERE _pk = \(literal: key)")
            } else {
                try Self.write(choice, key: key, table: "recipe", writer, connection, live: store,
                               insert: ("_entity, name", { _ in "'Recipe', 'new'" }), update: { _ in "name = name || '*'" })
            }
        case .unorderedMadeOrdered, .orderedMadeUnordered:
            let chef = value * 53 % 300 + 1
            if choice == 1 {
                let last: SQL = "(SELECT coalesce(max(chef_order) + 1, 0) FROM \(store)recipe WHERE chef_pk = \(literal: chef))"
                let liveOrder: SQL = self == .unorderedMadeOrdered ? ", chef_order = \(last)" : ""
                try connection.execute("UPDATE \(store)recipe SET chef_pk = (SELECT _pk FROM \(store)chef WHERE _pk = \(literal: chef))\(liveOrder) WHERE _pk = \(literal: key)")
                let twinOrder: SQL = self == .orderedMadeUnordered ? ", chef_order = 0" : ""
                try connection.execute("UPDATE \(shadow)recipe SET chef_pk = (SELECT _pk FROM \(shadow)chef WHERE _pk = \(literal: chef))\(twinOrder) WHERE _pk = \(literal: key)")
            } else {
                try Self.write(choice, key: key, table: "recipe", writer, connection, live: store,
                               insert: ("_entity, name", { _ in "'Recipe', 'new'" }), update: { _ in "name = name || '*'" })
            }
        case .movedBelowANewParent:
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection, live: store,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'new', \(unsafeRaw: entity == "Cake" ? String(value) : "NULL")" }),
                           update: { _ in "name = name || '*', layers = CASE WHEN _entity = 'Cake' THEN \(literal: value) END" })
        case .rootGivenAParent:
            // v2's table of the hierarchy is dessert; v1 knows its Cake rows only.
            try Self.write(choice, key: key, table: "cake", liveTable: "dessert", only: "_entity = 'Cake'", writer, connection, live: store,
                           insert: ("_entity, name, layers", { _ in "'Cake', 'new', \(literal: value)" }),
                           update: { _ in "name = name || '*', layers = \(literal: value)" })
        }
    }

    /// One write of `choice` (0: insert, 1 and 2: update, 3: delete) of row `key` of `table`,
    /// on the live store (`live`: the schema's prefix, empty for the old release's path) and
    /// alike on the twin; the twin's insert takes the `_pk` the live store gave. The SQL of the
    /// values and assignments is given the prefix of the schema it runs in.
    static func write(
        _ choice: Int, key: Int, table: String, liveTable: String? = nil, only: SQL? = nil, _ writer: TwinWriter, _ connection: PostgresConnection, live: SQL = unqualified,
        insert: (columns: String, values: (SQL) -> SQL), update: (SQL) -> SQL
    ) throws {
        let liveName: SQL = "\(live)\(ident: liveTable ?? table)", twinName: SQL = "\(shadow)\(ident: table)"
        let filter: SQL = only.map { " AND \($0)" } ?? ""
        switch choice {
        case 0:
            let columns = SQL(unsafeRaw: insert.columns)
            let pk = try connection.execute("INSERT INTO \(liveName) (\(columns)) VALUES (\(insert.values(live))) RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO \(twinName) (_pk, \(columns)) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), \(insert.values(shadow)))")
        case 1, 2:
            try connection.execute("UPDATE \(liveName) SET \(update(live)) WHERE _pk = \(literal: key)\(filter)")
            try connection.execute("UPDATE \(twinName) SET \(update(shadow)) WHERE _pk = \(literal: key)")
        default:
            try connection.execute("DELETE FROM \(liveName) WHERE _pk = \(literal: key)\(filter)")
            try connection.execute("DELETE FROM \(twinName) WHERE _pk = \(literal: key)")
        }
    }
}
