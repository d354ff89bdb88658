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
    case requiredWithDefault, requiredForASubEntity, toOneMadeToMany, unorderedMadeOrdered, orderedMadeUnordered,
         manyToManyMadeOrdered, manyToManyMadeUnordered, movedBelowANewParent, renamedAndMovedBelowANewParent, rootGivenAParent, entityRenamed

    typealias S = MigratedStore
    static let shadow: SQL = "\(ident: ExpandApplyTests.shadow)."
    static let store: SQL = "\(ident: S.store)."
    /// The old release's names, found through its `search_path`.
    static let unqualified = SQL(unsafeRaw: "")

    var description: String { rawValue }

    func model() throws -> VersionedModel {
        let chef = OldVersionLinkViewTests.chefAndRecipes
        let tags = { (ordered: String) in S.version("""
            Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true\(ordered)}}}
            Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
            """) }
        switch self {
        case .requiredForASubEntity:
            return try S.model([
                ("v1", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: {type: int16, optional: true}}}")),
                ("v2", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}}}")),
            ])
        case .manyToManyMadeOrdered: return try S.model([("v1", tags("")), ("v2", tags(", ordered: true"))])
        case .manyToManyMadeUnordered: return try S.model([("v1", tags(", ordered: true")), ("v2", tags(""))])
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
        case .entityRenamed:
            return try S.model([
                ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}")),
                ("v2", S.version("Dish: {renamingIdentifier: Recipe, attributes: {name: string, rating: int16}}")),
            ])
        case .renamedAndMovedBelowANewParent:
            return try S.model([
                ("v1", S.version("Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
                ("v2", S.version("Dessert: {attributes: {name: string}}\nBaked: {parent: Dessert, attributes: {oven: int16}}\nGateau: {renamingIdentifier: Cake, parent: Baked, attributes: {layers: int16}}")),
            ])
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
        case .entityRenamed: return ("recipe", ["_pk", "_entity", "name", "rating"], ["_pk", "_entity", "name", "rating"])
        case .requiredForASubEntity:
            return ("dessert", ["_pk", "_entity", "layers"], ["_pk", "_entity", "CASE WHEN _entity = 'Cake' THEN coalesce(layers, 1) END"])
        // The view counts positions of a many-to-many made unordered by key: not what v1 wrote.
        case .manyToManyMadeOrdered, .manyToManyMadeUnordered: return ("recipe__tags", ["recipe_pk", "tags_pk"], ["recipe_pk", "tags_pk"])
        // The view counts an unordered one-to-many's positions by key: not what v1 wrote.
        case .toOneMadeToMany, .unorderedMadeOrdered, .orderedMadeUnordered: return ("recipe", ["_pk", "name", "chef_pk"], ["_pk", "name", "chef_pk"])
        case .movedBelowANewParent, .renamedAndMovedBelowANewParent: return ("dessert", ["_pk", "_entity", "name", "layers"], ["_pk", "_entity", "name", "layers"])
        case .rootGivenAParent: return ("cake", ["_pk", "_entity", "name", "layers"], ["_pk", "_entity", "name", "layers"])
        }
    }

    /// The order column v2 adds, which v1's writes do not decide (`expectPositionsThenTakeTheTwins`).
    struct AddedOrder {
        var table: String, owner: String, keys: [String], column: String
    }

    var addedOrder: AddedOrder? {
        switch self {
        case .unorderedMadeOrdered: return AddedOrder(table: "recipe", owner: "chef_pk", keys: ["_pk"], column: "chef_order")
        case .manyToManyMadeOrdered: return AddedOrder(table: "recipe__tags", owner: "recipe_pk", keys: ["recipe_pk", "tags_pk"], column: "tags_order")
        default: return nil
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
        case .requiredForASubEntity:
            // A cake's NULL layers become v2's default; a dessert's stay NULL.
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'old', NULL" }),
                           update: { _ in "name = name || '+', layers = CASE WHEN _entity = 'Cake' AND \(literal: value) > 3 THEN \(literal: value) END" })
        case .manyToManyMadeOrdered, .manyToManyMadeUnordered:
            try Self.link(choice, recipe: key % 300 + 1, tag: value * 37 % 300 + 1, writer, connection, live: Self.unqualified, ordered: (self == .manyToManyMadeUnordered, self == .manyToManyMadeUnordered))
        case .toOneMadeToMany, .unorderedMadeOrdered, .orderedMadeUnordered:
            let chef = { (schema: SQL) -> SQL in "(SELECT _pk FROM \(schema)chef WHERE _pk = \(literal: value * 37 % 300 + 1))" }
            let order: SQL = self == .orderedMadeUnordered ? ", chef_order = \(literal: value)" : ""
            try Self.write(choice, key: key, table: "recipe", writer, connection,
                           insert: ("_entity, name, chef_pk", { "'Recipe', 'old', \(chef($0))" }),
                           update: { "name = name || '+', chef_pk = \(chef($0))\(order)" })
        case .movedBelowANewParent, .renamedAndMovedBelowANewParent:
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'old', \(unsafeRaw: entity == "Cake" ? String(value) : "NULL")" }),
                           update: { _ in "name = name || '+', layers = CASE WHEN _entity = 'Cake' THEN \(literal: value) END" })
        case .entityRenamed:
            try Self.write(choice, key: key, table: "recipe", writer, connection,
                           insert: ("_entity, name, rating", { _ in "'Recipe', 'old', \(literal: value)" }),
                           update: { _ in "name = name || '+', rating = CASE WHEN _entity = 'Recipe' THEN \(literal: value) END" })
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
        case .requiredForASubEntity:
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection, live: store,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'new', \(unsafeRaw: entity == "Cake" ? String(value) : "NULL")" }),
                           update: { _ in "name = name || '*', layers = CASE WHEN _entity = 'Cake' THEN \(literal: value) END" })
        case .manyToManyMadeOrdered, .manyToManyMadeUnordered:
            try Self.link(choice, recipe: key % 300 + 1, tag: value * 53 % 300 + 1, writer, connection, live: store, ordered: (self == .manyToManyMadeOrdered, self == .manyToManyMadeUnordered))
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
        case .renamedAndMovedBelowANewParent:
            // v2 names the entity Gateau; the twin, v1, Cake.
            let cake = value > 2
            for (schema, name) in [(store, "Gateau"), (shadow, "Cake")] where choice != 0 {
                try connection.execute(choice == 3
                    ? "DELETE FROM \(schema)dessert WHERE _pk = \(literal: key)"
                    : "UPDATE \(schema)dessert SET name = name || '*', layers = CASE WHEN _entity = \(literal: name) THEN \(literal: value) END WHERE _pk = \(literal: key)")
            }
            if choice == 0 {
                let layers: SQL = cake ? "\(literal: value)" : "NULL"
                let pk = try connection.execute("INSERT INTO \(store)dessert (_entity, name, layers) VALUES (\(literal: cake ? "Gateau" : "Dessert"), 'new', \(layers)) RETURNING _pk").rows[0][0]!
                try connection.execute("INSERT INTO \(shadow)dessert (_pk, _entity, name, layers) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), \(literal: cake ? "Cake" : "Dessert"), 'new', \(layers))")
            }
        case .movedBelowANewParent:
            let entity = value > 2 ? "Cake" : "Dessert"
            try Self.write(choice, key: key, table: "dessert", writer, connection, live: store,
                           insert: ("_entity, name, layers", { _ in "\(literal: entity), 'new', \(unsafeRaw: entity == "Cake" ? String(value) : "NULL")" }),
                           update: { _ in "name = name || '*', layers = CASE WHEN _entity = 'Cake' THEN \(literal: value) END" })
        case .entityRenamed:
            // v2's table and entity are dish and Dish; the twin's, v1's, recipe and Recipe.
            let tables: [(SQL, String)] = [("\(store)dish", "Dish"), ("\(shadow)recipe", "Recipe")]
            for (target, name) in tables where choice != 0 {
                try connection.execute(choice == 3
                    ? "DELETE FROM \(target) WHERE _pk = \(literal: key)"
                    : "UPDATE \(target) SET name = name || '*', rating = CASE WHEN _entity = \(literal: name) THEN \(literal: value) END WHERE _pk = \(literal: key)")
            }
            if choice == 0 {
                let pk = try connection.execute("INSERT INTO \(store)dish (_entity, name, rating) VALUES ('Dish', 'new', \(literal: value)) RETURNING _pk").rows[0][0]!
                try connection.execute("INSERT INTO \(shadow)recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), 'Recipe', 'new', \(literal: value))")
            }
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

    /// A link between a recipe and a tag added (choice 0 to 2) or removed (3), on the live store
    /// (`live`: the schema's prefix) and alike on the twin, when both rows are there. `ordered`:
    /// whether the join table, as the live store's writer and the twin see it, keeps the order
    /// (a link added goes last among the recipe's).
    static func link(
        _ choice: Int, recipe: Int, tag: Int, _ writer: TwinWriter, _ connection: PostgresConnection, live: SQL, ordered: (live: Bool, twin: Bool)
    ) throws {
        for (schema, withOrder) in [(live, ordered.live), (shadow, ordered.twin)] {
            let pair: SQL = "recipe_pk = \(literal: recipe) AND tags_pk = \(literal: tag)"
            guard choice < 3 else {
                try connection.execute("DELETE FROM \(schema)recipe__tags WHERE \(pair)")
                continue
            }
            let (column, position): (SQL, SQL) = withOrder
                ? (", tags_order", ", (SELECT coalesce(max(tags_order) + 1, 0) FROM \(schema)recipe__tags WHERE recipe_pk = \(literal: recipe))")
                : ("", "")
            try connection.execute("""
                INSERT INTO \(schema)recipe__tags (recipe_pk, tags_pk\(column)) SELECT \(literal: recipe), \(literal: tag)\(position) \
                WHERE NOT EXISTS (SELECT 1 FROM \(schema)recipe__tags WHERE \(pair)) \
                AND EXISTS (SELECT 1 FROM \(schema)recipe WHERE _pk = \(literal: recipe)) AND EXISTS (SELECT 1 FROM \(schema)tag WHERE _pk = \(literal: tag))
                """)
        }
    }
}
