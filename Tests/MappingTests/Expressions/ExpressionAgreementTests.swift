import Foundation
import Mapping
import ObjectModel
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// The set-based path (the compiled SQL, run by PostgreSQL) and the streaming path (the
/// evaluator) give the same value for every expression and row, or fail with the same message;
/// filters select the same rows.
@Suite(.serialized) struct ExpressionAgreementTests {
    typealias F = ExpressionFixtures

    struct Recipe {
        var pk: Int64
        var values: [String: Value]
        var chef: Int64?
    }

    static let chefs: [(pk: Int64, name: Value, rank: Value, restaurant: Int64?)] = [
        (1, .string("Ann"), .int(2), 1),
        (2, .string("Bo"), .null, nil),
    ]
    static let restaurants: [(pk: Int64, city: String)] = [(1, "Oslo")]

    static let recipes: [Recipe] = [
        Recipe(pk: 1, values: [
            "name": .string("Apple pie"), "notes": .string(" \t hi \n"), "amount": .int(7), "rating": .int(5), "servings": .int(12),
            "temperature": .double(212), "weight": .double(98.6), "price": .decimal("12.50"), "size": .int(3),
            "isVegan": .bool(true), "created": .date(F.date("2024-01-02T03:04:05Z")), "photo": .bytes([1, 2, 255]),
            "uid": .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!), "link": .string("https://example.com"),
        ], chef: 1),
        Recipe(pk: 2, values: ["name": .string("Bread")], chef: nil),
        Recipe(pk: 3, values: [
            "name": .string("cafe\u{301}"), "notes": .string("50%_off"), "amount": .int(Int64(Int32.min)), "rating": .int(-32768),
            "servings": .int(Int64.max), "temperature": .double(-40), "weight": .double(0.1), "price": .decimal("-0.005"),
            "size": .int(0), "isVegan": .bool(false),
        ], chef: 2),
        Recipe(pk: 4, values: [
            "name": .string("STRASSE"), "amount": .int(0), "servings": .int(-1), "temperature": .double(1e300),
            "weight": .double(3.4028235e38), "price": .decimal("1e+20"), "size": .int(-3),
        ], chef: 1),
        Recipe(pk: 5, values: [
            "name": .string("zeta"), "amount": .int(100), "temperature": .double(100.5), "weight": .double(2.5), "price": .decimal("100"),
            "notes": .string("zeta"),
        ], chef: nil),
    ]

    static let columns: [(attribute: String, type: String)] = [
        ("name", "text NOT NULL"), ("notes", "text"), ("amount", "integer"), ("rating", "smallint"), ("servings", "bigint"),
        ("temperature", "double precision"), ("weight", "real"), ("price", "numeric"), ("size", "integer"),
        ("isVegan", "boolean"), ("created", "timestamptz"), ("photo", "bytea"), ("uid", "uuid"), ("link", "text"),
    ]

    /// The source row of a recipe as the streaming path reads it, joined rows included.
    static func sourceRow(_ recipe: Recipe) -> [String: Value] {
        var row = Dictionary(uniqueKeysWithValues: columns.map { ($0.attribute, recipe.values[$0.attribute] ?? .null) })
        let chef = chefs.first { $0.pk == recipe.chef }
        row["chef.name"] = chef?.name ?? .null
        row["chef.rank"] = chef?.rank ?? .null
        row["chef.restaurant.city"] = restaurants.first { $0.pk == chef?.restaurant }.map { .string($0.city) } ?? .null
        return row
    }

    static let expressions: [(String, String)] = [
        ("$source.amount", "totalCost"),
        ("($source.temperature - 32.0) / 1.8", "temperatureC"),
        ("$source.amount * 2", "count"),
        ("$source.servings * 2", "count"),
        ("$source.servings + $source.amount", "count"),
        ("$source.amount - -5", "count"),
        ("$source.rating * $source.rating * $source.rating", "count"),
        ("$source.amount / 3", "temperatureC"),
        ("$source.amount / $source.#size", "temperatureC"),
        ("$source.price * 1.1", "price"),
        ("$source.price - $source.amount * 2", "price"),
        ("$source.price / 3", "price"),
        ("$source.price / 4", "price"),
        ("$source.price + $source.temperature", "temperatureC"),
        ("$source.price", "temperatureC"),
        ("$source.price", "weight"),
        ("$source.weight", "temperatureC"),
        ("$source.weight", "price"),
        ("$source.weight * 1.5", "weight"),
        ("$source.weight + $source.weight", "temperatureC"),
        ("-$source.weight", "weight"),
        ("$source.temperature", "weight"),
        ("$source.temperature * 1e10", "temperatureC"),
        ("$source.servings", "totalCost"),
        ("$source.rating", "small"),
        ("-$source.rating", "small"),
        ("abs:($source.amount)", "totalCost"),
        ("$source.amount", "price"),
        ("$source.amount", "weight"),
        ("$source.servings", "weight"),
        ("uppercase:($source.name)", "title"),
        ("lowercase:($source.chef.name)", "title"),
        ("trim:($source.notes)", "title"),
        ("length:($source.name)", "totalCost"),
        ("length:($source.notes) * 2", "count"),
        ("$source.chef.restaurant.city", "title"),
        ("now()", "created"),
        ("$source.created", "created"),
        ("$source.photo", "photo"),
        ("$source.uid", "uid"),
        ("$source.name", "link"),
        ("1.5 + 2", "temperatureC"),
        ("-2.5", "weight"),
        (#""it's""#, "title"),
        ("nil", "title"),
        ("YES", "isVegan"),
        ("$source.isVegan", "isVegan"),
    ]

    static let filters: [String] = [
        "amount > 5", "amount > 100.5", "NOT (amount > 5)", "amount >= -2147483648", "notes == nil", "notes != nil",
        "notes != 'zeta'", "NOT (notes == 'zeta')", "name == notes", "NOT (name == notes)", "name ==[c] 'apple PIE'",
        "name < 'a'", "name >[c] 'b'", "name BEGINSWITH 'App'", "name BEGINSWITH[c] 'app'", "notes CONTAINS '%_'",
        "notes LIKE '50*'", "name LIKE '?read'", "name LIKE[c] '*E'", "amount IN {7, 100}", "amount IN {7, 2.5}",
        "name IN[c] {'bread', 'ZETA'}", "price > 1.5", "price == 100", "weight == 0.1", "weight >= 2.5", "chef.name == 'Ann'",
        "NOT (chef.restaurant.city == 'Oslo')", "temperature < amount", "isVegan == YES", "NOT isVegan == NO",
        "created > CAST(0, \"NSDate\")", "length:(name) > 4", "amount + 1 > 2 OR price < 0", "NOT (amount + 1 > 2 OR price < 0)",
        "TRUEPREDICATE",
    ]

    @Test("SQL and Swift compute the same values", integration)
    func valuesAgree() throws {
        try TestDatabase.withFreshConnection { connection in
            try Self.createStore(connection)
            for (text, attribute) in Self.expressions {
                let checked = try F.checked(text, into: attribute)
                let select = try #require(F.compiler.compile(checked))
                for recipe in Self.recipes {
                    let fromSQL = Self.run(select, checked, recipe.pk, connection)
                    let evaluator = ExpressionEvaluator(now: fromSQL.now ?? Date())
                    let fromSwift = Result { try evaluator.evaluate(checked, source: Self.sourceRow(recipe)) }
                    switch (fromSQL.value, fromSwift) {
                    case (.success(let sqlValue), .success(let swiftValue)):
                        #expect(Self.same(sqlValue, swiftValue), "\(attribute) = \(text), recipe \(recipe.pk): SQL \(sqlValue), Swift \(swiftValue)")
                    case (.failure(let sqlError), .failure(let swiftError as EvaluationError)):
                        #expect(sqlError.message == swiftError.message, "\(attribute) = \(text), recipe \(recipe.pk)")
                    default:
                        Issue.record("\(attribute) = \(text), recipe \(recipe.pk): SQL \(fromSQL.value), Swift \(fromSwift)")
                    }
                }
            }
        }
    }

    @Test("SQL and Swift filters select the same rows", integration)
    func filtersAgree() throws {
        try TestDatabase.withFreshConnection { connection in
            try Self.createStore(connection)
            let evaluator = ExpressionEvaluator(now: Date())
            for text in Self.filters {
                let checked = try F.filter(text)
                let sql: SQL = "SELECT \"s\".\"_pk\" FROM \"recipe\" AS \"s\"\(Self.joins(checked.joins)) WHERE \(F.compiler.compile(checked)) ORDER BY 1"
                let fromSQL = try connection.execute(sql).rows.map { Int64($0[0]!)! }
                let fromSwift = try Self.recipes.filter { try evaluator.evaluate(checked, source: Self.sourceRow($0)) }.map(\.pk)
                #expect(fromSQL == fromSwift, "\(text): SQL \(sql.text)")
            }
        }
    }

    // MARK: The store

    static func createStore(_ connection: PostgresConnection) throws {
        try connection.execute("CREATE TABLE \"restaurant\" (\"_pk\" bigint PRIMARY KEY, \"city\" text)")
        try connection.execute("CREATE TABLE \"chef\" (\"_pk\" bigint PRIMARY KEY, \"name\" text, \"rank\" smallint, \"restaurant_pk\" bigint)")
        let definitions = columns.map { quoteIdentifier(StoreNaming.columnName(attribute: $0.attribute)) + " " + $0.type }
        try connection.execute(SQL(unsafeRaw: "CREATE TABLE \"recipe\" (\"_pk\" bigint PRIMARY KEY, \(definitions.joined(separator: ", ")), \"chef_pk\" bigint)"))
        for restaurant in restaurants {
            try connection.execute("INSERT INTO \"restaurant\" VALUES (\(restaurant.pk), \(restaurant.city))")
        }
        for chef in chefs {
            try connection.execute("INSERT INTO \"chef\" VALUES (\(chef.pk), \(bind(chef.name)), \(bind(chef.rank)), \(chef.restaurant.map(SQLValue.int) ?? .null))")
        }
        for recipe in recipes {
            let values = SQL.joined(columns.map { "\(bind(recipe.values[$0.attribute] ?? .null))" }, separator: ", ")
            try connection.execute("INSERT INTO \"recipe\" VALUES (\(recipe.pk), \(values), \(recipe.chef.map(SQLValue.int) ?? .null))")
        }
    }

    static func bind(_ value: Value) -> SQLValue {
        switch value {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .decimal(let text): .text(text)
        case .string(let s): .text(s)
        case .bool(let b): .bool(b)
        case .date(let date): .text(ISO8601DateFormatter().string(from: date))
        case .bytes(let bytes): .bytes(bytes)
        case .uuid(let uuid): .text(uuid.uuidString)
        }
    }

    /// `LEFT JOIN` for each to-one path, under the compiler's default aliases.
    static func joins(_ joins: [ToOneJoin]) -> SQL {
        var sql: SQL = ""
        for join in joins {
            let alias = SQLExpressionCompiler.defaultJoinAlias(sourceAlias: "s", path: join.path)
            let parent = join.path.count == 1 ? "s" : SQLExpressionCompiler.defaultJoinAlias(sourceAlias: "s", path: Array(join.path.dropLast()))
            let table = StoreNaming.tableName(entity: join.relationship.destination)
            let foreignKey = StoreNaming.foreignKeyColumnName(relationship: join.relationship.name)
            sql.append(" LEFT JOIN \(ident: table) AS \(ident: alias) ON \(ident: alias, "_pk") = \(ident: parent, foreignKey)")
        }
        return sql
    }

    // MARK: Running the SQL

    /// The value the SQL stores in the destination attribute for one recipe, read back as a
    /// `Value`, and the transaction time `now()` gave.
    static func run(_ select: SQL, _ checked: CheckedExpression, _ pk: Int64, _ connection: PostgresConnection) -> (value: Result<Value, PostgresError>, now: Date?) {
        let type = checked.destination.type
        let stored: SQL = switch type {
        case .integer16: "CAST(\(select) AS smallint)::text"
        case .integer32: "CAST(\(select) AS integer)::text"
        case .integer64: "CAST(\(select) AS bigint)::text"
        case .decimal: "CAST(\(select) AS numeric)::text"
        case .double: "CAST(\(select) AS double precision)::text"
        case .float: "CAST(\(select) AS real)::text"
        case .boolean: "CAST(\(select) AS boolean)::text"
        case .date: "extract(epoch from CAST(\(select) AS timestamptz))::text"
        case .binaryData: "encode(CAST(\(select) AS bytea), 'hex')"
        case .uuid: "CAST(\(select) AS uuid)::text"
        default: "CAST(\(select) AS text)"
        }
        let query: SQL = "SELECT extract(epoch from now())::text, \(stored) FROM \"recipe\" AS \"s\"\(joins(checked.joins)) WHERE \"s\".\"_pk\" = \(pk)"
        do {
            let row = try connection.execute(query).rows[0]
            let now = Date(timeIntervalSince1970: Double(row[0]!)!)
            guard let text = row[1] else { return (.success(.null), now) }
            let value: Value = switch type {
            case .integer16, .integer32, .integer64: .int(Int64(text)!)
            case .decimal: Value.decimal(normalizing: text)!
            case .double: .double(Double(text)!)
            case .float: .double(Double(Float(text)!))
            case .boolean: .bool(text == "true")
            case .date: .date(Date(timeIntervalSince1970: Double(text)!))
            case .binaryData: .bytes(stride(from: 0, to: text.count, by: 2).map { offset in
                let start = text.index(text.startIndex, offsetBy: offset)
                return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
            })
            case .uuid: .uuid(UUID(uuidString: text)!)
            default: .string(text)
            }
            return (.success(value), now)
        } catch let error as PostgresError {
            return (.failure(error), nil)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Equal values; dates to the microsecond PostgreSQL keeps.
    static func same(_ a: Value, _ b: Value) -> Bool {
        if case .date(let x) = a, case .date(let y) = b { return abs(x.timeIntervalSince1970 - y.timeIntervalSince1970) < 1e-6 }
        return a == b
    }
}
