import Testing
@testable import Planning

/// A uniqueness constraint added: `UNIQUE` on a root entity's table, a partial unique index on a
/// sub-entity's rows; online, the index built concurrently (a root entity's constraint then adopts it).
/// The change: Planning/Changes/AddUnique.swift.
@Suite struct AddUniqueTests: RuleRows, OnlineStepFixtures {
    /// Rule rows: a model edit and the golden SQL of the step that plans it offline, then the
    /// SQL of the phases `apply --online` plans for it.
    static let rows: [(RuleCase, online: [String])] = [
        (.init("adding a uniqueness constraint to a root entity adds UNIQUE", from: M.recipe("name: string, code: string"), to: "Recipe: {attributes: {name: string, code: string}, uniquenessConstraints: [[code]]}", [
            #"DO $check$\#nDECLARE\#n    offending bigint;\#n    first_keys text;\#nBEGIN\#n    SELECT count(*) INTO offending FROM (SELECT "_pk" FROM "s"."recipe" WHERE ("code") IN (SELECT "code" FROM "s"."recipe" GROUP BY "code" HAVING count(*) > 1)) AS r;\#n    IF offending > 0 THEN\#n        SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (SELECT "_pk" FROM "s"."recipe" WHERE ("code") IN (SELECT "code" FROM "s"."recipe" GROUP BY "code" HAVING count(*) > 1) ORDER BY 1 LIMIT 5) AS k;\#n        RAISE EXCEPTION USING ERRCODE = 'check_violation',\#n            MESSAGE = format('%s rows of recipe sharing (code) (new uniqueness constraint recipe_code_key); first _pk: %s', offending, first_keys),\#n            HINT = 'make those rows unique, or drop the uniqueness constraint from this version';\#n    END IF;\#nEND\#n$check$"#,
            #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "recipe_code_key" UNIQUE ("code")"#,
        ]), online: [
            #"DO $check$\#nDECLARE\#n    offending bigint;\#n    first_keys text;\#nBEGIN\#n    SELECT count(*) INTO offending FROM (SELECT "_pk" FROM "s"."recipe" WHERE ("code") IN (SELECT "code" FROM "s"."recipe" GROUP BY "code" HAVING count(*) > 1)) AS r;\#n    IF offending > 0 THEN\#n        SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (SELECT "_pk" FROM "s"."recipe" WHERE ("code") IN (SELECT "code" FROM "s"."recipe" GROUP BY "code" HAVING count(*) > 1) ORDER BY 1 LIMIT 5) AS k;\#n        RAISE EXCEPTION USING ERRCODE = 'check_violation',\#n            MESSAGE = format('%s rows of recipe sharing (code) (new uniqueness constraint recipe_code_key); first _pk: %s', offending, first_keys),\#n            HINT = 'make those rows unique, or drop the uniqueness constraint from this version';\#n    END IF;\#nEND\#n$check$"#,
            #"CREATE UNIQUE INDEX CONCURRENTLY "recipe_code_key" ON "s"."recipe" ("code")"#,
            #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "recipe_code_key" UNIQUE USING INDEX "recipe_code_key""#,
        ]),
        (.init("adding a uniqueness constraint to a sub-entity adds a partial unique index over its rows", from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}", to: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}, uniquenessConstraints: [[bark]]}", [
            #"DO $check$\#nDECLARE\#n    offending bigint;\#n    first_keys text;\#nBEGIN\#n    SELECT count(*) INTO offending FROM (SELECT "_pk" FROM "s"."animal" WHERE ("bark") IN (SELECT "bark" FROM "s"."animal" WHERE "_entity" IN ('Dog') GROUP BY "bark" HAVING count(*) > 1) AND "_entity" IN ('Dog')) AS r;\#n    IF offending > 0 THEN\#n        SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (SELECT "_pk" FROM "s"."animal" WHERE ("bark") IN (SELECT "bark" FROM "s"."animal" WHERE "_entity" IN ('Dog') GROUP BY "bark" HAVING count(*) > 1) AND "_entity" IN ('Dog') ORDER BY 1 LIMIT 5) AS k;\#n        RAISE EXCEPTION USING ERRCODE = 'check_violation',\#n            MESSAGE = format('%s rows of animal sharing (bark) (new uniqueness constraint animal_bark_key); first _pk: %s', offending, first_keys),\#n            HINT = 'make those rows unique, or drop the uniqueness constraint from this version';\#n    END IF;\#nEND\#n$check$"#,
            #"CREATE UNIQUE INDEX "animal_bark_key" ON "s"."animal" ("bark") WHERE "_entity" IN ('Dog')"#,
        ]), online: [
            #"DO $check$\#nDECLARE\#n    offending bigint;\#n    first_keys text;\#nBEGIN\#n    SELECT count(*) INTO offending FROM (SELECT "_pk" FROM "s"."animal" WHERE ("bark") IN (SELECT "bark" FROM "s"."animal" WHERE "_entity" IN ('Dog') GROUP BY "bark" HAVING count(*) > 1) AND "_entity" IN ('Dog')) AS r;\#n    IF offending > 0 THEN\#n        SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (SELECT "_pk" FROM "s"."animal" WHERE ("bark") IN (SELECT "bark" FROM "s"."animal" WHERE "_entity" IN ('Dog') GROUP BY "bark" HAVING count(*) > 1) AND "_entity" IN ('Dog') ORDER BY 1 LIMIT 5) AS k;\#n        RAISE EXCEPTION USING ERRCODE = 'check_violation',\#n            MESSAGE = format('%s rows of animal sharing (bark) (new uniqueness constraint animal_bark_key); first _pk: %s', offending, first_keys),\#n            HINT = 'make those rows unique, or drop the uniqueness constraint from this version';\#n    END IF;\#nEND\#n$check$"#,
            #"CREATE UNIQUE INDEX CONCURRENTLY "animal_bark_key" ON "s"."animal" ("bark") WHERE "_entity" IN ('Dog')"#,
        ]),
    ]

    @Test(arguments: rows.map(\.0))
    func sql(_ row: RuleCase) throws { try Self.expectOfflineSQL(row) }

    @Test(arguments: rows)
    func onlineSQL(_ row: RuleCase, online: [String]) throws { try Self.expectOnlineSQL(row, online) }
}
