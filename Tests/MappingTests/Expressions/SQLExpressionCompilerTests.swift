import Mapping
import SQLBuilding
import Testing

@Suite struct SQLExpressionCompilerTests {
    typealias F = ExpressionFixtures

    @Test("value expressions compile to exact SQL over the source row", arguments: [
        ("$source.amount", "totalCost", #""s"."amount""#),
        ("($source.temperature - 32.0) / 1.8", "temperatureC", #"(("s"."temperature" - 32.0) / 1.8)"#),
        ("$source.#size", "totalCost", #""s"."size""#),
        ("$source.isVegan", "isVegan", #""s"."is_vegan""#),
        // Integers compute in bigint, as Int64 does in Swift.
        ("$source.amount * 2", "count", #"("s"."amount"::bigint * 2)"#),
        ("$source.servings + 1", "count", #"("s"."servings" + 1)"#),
        ("$source.rating + $source.amount", "count", #"("s"."rating"::bigint + "s"."amount")"#),
        ("-$source.rating", "small", #"(-"s"."rating"::bigint)"#),
        ("$source.amount - -5", "count", #"("s"."amount" - (-5::bigint))"#),
        // Division and floating point compute in double precision; a Float column is widened.
        ("$source.amount / 2", "temperatureC", #"("s"."amount"::double precision / 2)"#),
        ("$source.weight * 2", "weight", #"("s"."weight"::double precision * 2)"#),
        ("$source.weight + $source.temperature", "temperatureC", #"("s"."weight" + "s"."temperature")"#),
        ("1.5 + 2", "temperatureC", "(1.5::double precision + 2)"),
        ("-$source.temperature", "temperatureC", #"(-"s"."temperature")"#),
        // Decimals stay exact in numeric; a fractional literal next to one is a decimal.
        ("$source.price * 1.1", "price", #"("s"."price" * 1.1)"#),
        ("$source.price - $source.amount", "price", #"("s"."price" - "s"."amount")"#),
        ("$source.price / 4", "price", #"("s"."price"::double precision / 4)"#),
        // To-one key paths read the joined row.
        ("$source.chef.name", "title", #""s.chef"."name""#),
        ("$source.chef.restaurant.city", "title", #""s.chef.restaurant"."city""#),
        // Built-ins.
        ("uppercase:($source.name)", "name", #"upper("s"."name")"#),
        ("trim:(lowercase:($source.chef.name))", "title", #"btrim(lower("s.chef"."name"), E' \t\n\r')"#),
        ("length:($source.name) + 1", "count", #"(char_length("s"."name")::bigint + 1)"#),
        ("abs:($source.amount)", "totalCost", #"abs("s"."amount")"#),
        ("now()", "created", "now()"),
        // Constants are inline literals.
        (#""it's""#, "title", "'it''s'"),
        ("nil", "title", "NULL"),
        ("YES", "isVegan", "true"),
        ("-2.5", "temperatureC", "(-2.5)"),
        (#"CAST(0, "NSDate")"#, "created", "to_timestamp(978307200.0)"),
    ])
    func compiles(_ text: String, _ attribute: String, _ sql: String) throws {
        let compiled = try #require(F.compiler.compile(try F.checked(text, into: attribute)))
        #expect(compiled.text == sql)
        #expect(compiled.binds.isEmpty)
    }

    @Test func joinedRowsUseTheAliasesTheCallerGives() throws {
        let compiler = SQLExpressionCompiler(sourceAlias: "src") { path in "j_" + path.joined(separator: "_") }
        let checked = try F.checked("uppercase:($source.chef.restaurant.city)", into: "title")
        #expect(compiler.compile(checked)?.text == #"upper("j_chef_restaurant"."city")"#)
        #expect(compiler.column(checked.attributes[0]).text == #""j_chef_restaurant"."city""#)
        let plain = try F.checked("$source.name", into: "title")
        #expect(compiler.column(plain.attributes[0]).text == #""src"."name""#)
    }

    @Test func theDefaultJoinAliasIsShortenedToPostgreSQLsLimit() {
        let path = Array(repeating: "aVeryLongRelationshipName", count: 4)
        let alias = SQLExpressionCompiler.defaultJoinAlias(sourceAlias: "s", path: path)
        #expect(alias.utf8.count <= 63)
        #expect(alias.hasPrefix("s.aVeryLongRelationshipName."))
    }

    @Test func anExpressionThatNeedsSwiftHasNoSQL() throws {
        let checked = try F.checked(#"FUNCTION($entityPolicy, "titleFor:", $source.name)"#, into: "title", mapping: F.recipeWithPolicy)
        #expect(checked.needsSwift)
        #expect(F.compiler.compile(checked) == nil)
    }

    @Test("filters compile to boolean SQL with NSPredicate's logic", arguments: [
        ("amount > 100", #"("s"."amount" > 100)"#),
        ("amount > 100.5", #"("s"."amount"::double precision > 100.5)"#),
        ("price > 1.5", #"("s"."price" > 1.5)"#),
        ("weight >= 2.5", #"("s"."weight"::double precision >= 2.5)"#),
        ("temperature < amount", #"("s"."temperature" < "s"."amount")"#),
        ("amount + 1 > 2", #"(("s"."amount"::bigint + 1) > 2)"#),
        ("notes == nil", #"("s"."notes" IS NULL)"#),
        ("nil != notes", #"("s"."notes" IS NOT NULL)"#),
        ("name == 'Pie'", #"("s"."name" = 'Pie')"#),
        ("name != 'Pie'", #"("s"."name" IS DISTINCT FROM 'Pie')"#),
        ("name == notes", #"("s"."name" IS NOT DISTINCT FROM "s"."notes")"#),
        ("name ==[c] 'pie'", #"(lower("s"."name") = lower('pie'))"#),
        ("name < 'm'", #"("s"."name" COLLATE "C" < 'm')"#),
        ("name >=[c] 'M'", #"(lower("s"."name") COLLATE "C" >= lower('M'))"#),
        ("name BEGINSWITH '50%_off'", #"("s"."name" LIKE '50\%\_off%')"#),
        ("name ENDSWITH[c] 'PIE'", #"("s"."name" ILIKE '%PIE')"#),
        (#"name CONTAINS "it's""#, #"("s"."name" LIKE '%it''s%')"#),
        ("name LIKE 'a*b?c%'", #"("s"."name" LIKE 'a%b_c\%')"#),
        (#"name LIKE "back\\slash""#, #"("s"."name" LIKE 'back\\slash')"#),
        ("amount IN {1, 2, 3}", #"("s"."amount" IN (1, 2, 3))"#),
        ("amount IN {1, 2.5}", #"("s"."amount"::double precision IN (1, 2.5))"#),
        ("name IN[c] {'a', 'B'}", #"(lower("s"."name") IN (lower('a'), lower('B')))"#),
        ("isVegan == YES", #"("s"."is_vegan" = true)"#),
        ("created > now()", #"("s"."created" > now())"#),
        ("chef.name == 'Ann'", #"("s.chef"."name" = 'Ann')"#),
        ("TRUEPREDICATE", "true"),
        (
            "amount > 1 AND (isVegan == YES OR notes != nil)",
            #"(("s"."amount" > 1) AND (("s"."is_vegan" = true) OR ("s"."notes" IS NOT NULL)))"#
        ),
        // Under NOT a comparison with a missing value must be false, not NULL.
        ("NOT (amount > 100)", #"(NOT COALESCE(("s"."amount" > 100), false))"#),
        (
            "NOT (amount > 100 AND notes == nil)",
            #"(NOT (COALESCE(("s"."amount" > 100), false) AND ("s"."notes" IS NULL)))"#
        ),
        ("NOT NOT amount > 1", #"(NOT (NOT ("s"."amount" > 1)))"#),
        ("NOT name != 'x'", #"(NOT ("s"."name" IS DISTINCT FROM 'x'))"#),
    ])
    func compilesFilters(_ text: String, _ sql: String) throws {
        let compiled = F.compiler.compile(try F.filter(text))
        #expect(compiled.text == sql)
        #expect(compiled.binds.isEmpty)
    }
}
