import Testing
@testable import Planning

/// Links copied into a join table, and numbered there, under `apply --online`; the refusals of
/// links whose owners' table is not known.
/// The change: Planning/Changes/FillJoinTable.swift.
@Suite struct FillJoinTableTests: OnlineStepFixtures, RuleRows {
    @Test func aToOneMadeToManyMovesItsLinksUnderAMirroringTriggerAndDropsTheColumnAtTheSwitchOver() throws {
        let phases = try Self.phases(
            "Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true}}}\nRecipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}",
            "Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true}}}\nRecipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, renamingIdentifier: cuisine}}}"
        )
        let sql = phases.flatMap { $0.statements.map(\.sql.text) + ($0.batches.map { [$0.template.text] } ?? []) }
        #expect(sql.contains { $0.hasPrefix(#"INSERT INTO "s"."cuisine__recipes""#) && $0.hasSuffix(#"AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#) })
        #expect(sql.filter { $0.contains("FOREIGN KEY") }.allSatisfy { $0.hasSuffix("NOT VALID") })
        #expect(sql.filter { $0.contains("VALIDATE CONSTRAINT") }.count == 2)
        #expect(sql.contains(#"CREATE INDEX CONCURRENTLY "cuisine__recipes_recipes_pk_idx" ON "s"."cuisine__recipes" ("recipes_pk")"#))
        #expect(phases.last?.statements.last?.sql.text == #"ALTER TABLE "s"."recipe" DROP COLUMN "cuisine_pk""#)
        #expect(sql.filter { $0.contains(#"DROP COLUMN "cuisine_pk""#) }.count == 1)
        #expect(phases.filter { $0.execution == .outsideTransaction }.allSatisfy { $0.index != nil })
    }

    @Test func linksMovedIntoAJoinTableInAnOrderTheSourceDidNotKeepAreCopiedThenNumbered() throws {
        let phases = try Self.phases(Self.cuisines(ordered: false), """
            Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true, ordered: true}}}
            Recipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, renamingIdentifier: cuisine}}}
            """)
        let batches = phases.compactMap(\.batches)
        #expect(batches.map(\.table) == ["recipe", "cuisine", "orchestrator_online_owners_\(OnlineTrigger.digest("cuisine__recipes.recipes_order"))", "orchestrator_online_owners_\(OnlineTrigger.digest("cuisine__recipes.recipes_order"))"])
        #expect(batches[0].template.text == #"INSERT INTO "s"."cuisine__recipes" ("cuisine_pk", "recipes_pk", "recipes_order") SELECT "cuisine_pk", "_pk", NULL FROM "s"."recipe" WHERE "cuisine_pk" IS NOT NULL AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#)
        #expect(batches[1].template.text.contains(#"(PARTITION BY "cuisine_pk" ORDER BY "recipes_pk")"#))
        let installs = phases.flatMap(\.installs).map(\.name)
        let links = OnlineTrigger.named("links", table: "recipe", column: "cuisine_pk")
        #expect(installs == [links.name, links.truncateFollower.name, "orchestrator_online_positions_\(OnlineTrigger.digest("cuisine__recipes.recipes_order"))"])
        #expect(phases.firstIndex { $0.installs.map(\.name) == [installs[2]] }! > phases.firstIndex { $0.batches == batches[0] }!, "the copy is not logged")
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(switchOver.firstIndex { $0.hasPrefix("WITH taken AS") }! > switchOver.lastIndex { $0.hasPrefix("DROP TRIGGER") }!)
        #expect(switchOver.last == #"ALTER TABLE "s"."recipe" DROP COLUMN "cuisine_pk""#)
    }

    @Test func linksReadFromAJoinTableAreMirroredByATriggerOnItAndCopiedByRangesOfTheirOwnersKeys() throws {
        let manyToMany = { (recipe: String, ordered: Bool) in
            """
            \(recipe): {\(recipe == "Recipe" ? "" : "renamingIdentifier: Recipe, ")relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
            Tag: {relationships: {recipes: {destination: \(recipe), inverse: tags, toMany: true, ordered: \(ordered)}}}
            """
        }
        let phases = try Self.phases(manyToMany("Recipe", false), manyToMany("Treat", true))
        let copy = try #require(phases.compactMap(\.batches).first { $0.template.text.hasPrefix("INSERT INTO") })
        #expect(copy.table == "tag")
        #expect(copy.template.text == #"INSERT INTO "s"."tag__recipes" ("tag_pk", "recipes_pk", "recipes_order") SELECT "tags_pk", "recipe_pk", NULL FROM "s"."recipe__tags" WHERE "tags_pk" IS NOT NULL AND "tags_pk" >= :from AND "tags_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#)
        let trigger = "orchestrator_online_links_\(OnlineTrigger.digest("recipe__tags.tags_pk"))"
        let install = try #require(phases.first { $0.installs.first?.name == trigger })
        let function = try #require(install.statements.first).sql.text
        #expect(function.contains(#"IF TG_OP <> 'INSERT' THEN"#) && function.contains(#"DELETE FROM "s"."tag__recipes" WHERE "tag_pk" = OLD."tags_pk" AND "recipes_pk" = OLD."recipe_pk";"#))
        #expect(function.contains(#"IF TG_OP <> 'DELETE' THEN"#))
        let numbering = try #require(phases.compactMap(\.batches).first { $0.table == "tag" && $0.template.text.hasPrefix("UPDATE") })
        #expect(numbering.template.text.contains(#"(PARTITION BY "tag_pk" ORDER BY "recipes_pk")"#))
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(switchOver.contains(#"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."recipe__tags""#))
        #expect(switchOver.last == #"DROP TABLE "s"."recipe__tags""#, "the application writes the old join table until the switch-over")
    }

    @Test func linksOfTheOwnersEntitiesTheDestinationCoversOnlyAreCopiedAndMirrored() throws {
        let phases = try Self.phases(
            "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {parent: Animal}\nToy: {}",
            "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nToy: {}"
        )
        let copy = try #require(phases.compactMap(\.batches).first { $0.template.text.hasPrefix(#"INSERT INTO "s"."dog__toys""#) })
        #expect(copy.table == "animal", "the owners are walked where the source keeps them")
        let dogs = #""animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog'))"#
        #expect(copy.template.text == #"INSERT INTO "s"."dog__toys" ("dog_pk", "toys_pk") SELECT "animal_pk", "toys_pk" FROM "s"."animal__toys" WHERE "animal_pk" IS NOT NULL AND "# + dogs + #" AND "animal_pk" >= :from AND "animal_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#)
        let function = try #require(phases.flatMap(\.statements).first { $0.sql.text.contains("orchestrator_online_links_") && $0.sql.text.hasPrefix("CREATE OR REPLACE FUNCTION") }).sql.text
        #expect(function.contains(#"IF TG_OP <> 'DELETE' AND NEW."# + dogs + " THEN"))
    }

    static let cuisines = """
        Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true, ordered: true}}}
        Recipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
        """

    @Test func orderedLinksTakeTheirPositionFromTheRowTheyAreReadFrom() throws {
        let phases = try Self.phases(Self.cuisines, """
            Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true, ordered: true}}}
            Recipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, ordered: true, renamingIdentifier: cuisine}}}
            """)
        let batch = try #require(phases.compactMap(\.batches).first { $0.template.text.hasPrefix("INSERT INTO") }).template.text
        let function = try #require(phases.flatMap(\.statements).first { $0.sql.text.contains("orchestrator_online_links_") && $0.sql.text.hasPrefix("CREATE OR REPLACE FUNCTION") }).sql.text
        // The kept order column, and 0 for the recipe's one cuisine, in the join table's order.
        #expect(batch == #"INSERT INTO "s"."cuisine__recipes" ("cuisine_pk", "recipes_pk", "recipes_order", "cuisines_order") SELECT "cuisine_pk", "_pk", "cuisine_order", 0 FROM "s"."recipe" WHERE "cuisine_pk" IS NOT NULL AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#)
        #expect(function.contains(#"OLD."cuisine_order" IS NOT DISTINCT FROM NEW."cuisine_order""#), "a new position alone moves the link")
        #expect(function.contains(#"VALUES (NEW."cuisine_pk", NEW."_pk", NEW."cuisine_order", 0) ON CONFLICT DO NOTHING"#))
    }

    @Test func linksWhoseOwnersTableIsNotKnown() {
        let change = FillJoinTable(table: "links", ownerColumn: "owner", targetColumn: "target", orderColumns: [], links: Self.joinTableLinks)
        #expect(Self.refusals(change) == [OnlineRefusal(
            .onlineUnsupportedLinkOwners,
            "copy links from old_links into links: the table of the links' owners is not known, so the copy's batches cannot walk them (docs/online-migrations.md, Limits)"
        )])
    }

    @Test func positionsAcrossRowsWhoseOwnersTableIsNotKnown() {
        let change = FillJoinTable(
            table: "links", ownerColumn: "owner", targetColumn: "target", orderColumns: [(column: "position", side: .target)],
            links: Self.joinTableLinks, referencedTables: ["target": "target_table"]
        )
        // Walked by the targets' table, the owners' table for the numbering is missing.
        var walked = change
        walked.links.ownerFilter = SourceLinks.OwnerFilter(table: "owner_table", entities: ["Owner"])
        #expect(Self.refusals(walked) == [OnlineRefusal(
            .onlineUnsupportedPositionOwners,
            "copy links from old_links into links: position numbers the links of each owner across rows, and the table of its owners is not known (docs/online-migrations.md, Limits)"
        )])
        let order = FillOrderColumn.oneToMany(table: "ingredient", column: "position", ownerColumn: "recipe", ownerTable: nil)
        #expect(Self.refusals(order) == [OnlineRefusal(
            .onlineUnsupportedPositionOwners,
            "number ingredient.position: the table of its owners is not known, so its batches cannot walk them (docs/online-migrations.md, Limits)"
        )])
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("moving an entity out copies the links it inherited into a join table of its own",
              from: "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {parent: Animal}\nToy: {}",
              to: "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nToy: {}", [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "_entity" SET DEFAULT 'Animal'"#,
            #"""
            CREATE TABLE "s"."dog" (
                "_pk" bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
                "_entity" text NOT NULL DEFAULT 'Dog',
                "name" text,
                PRIMARY KEY ("_pk"),
                CONSTRAINT "dog_entity_check" CHECK ("_entity" IN ('Dog'))
            )
            """#,
            #"""
            CREATE TABLE "s"."dog__toys" (
                "dog_pk" bigint NOT NULL,
                "toys_pk" bigint NOT NULL,
                PRIMARY KEY ("dog_pk", "toys_pk")
            )
            """#,
            #"INSERT INTO "s"."dog" ("_pk", "name", "_entity") SELECT "_pk", "name", CASE "_entity" WHEN 'Dog' THEN 'Dog' END FROM "s"."animal" WHERE "_entity" IN ('Dog')"#,
            #"SELECT setval(pg_get_serial_sequence('"s"."dog"', '_pk'), COALESCE((SELECT max("_pk") FROM "s"."dog"), 0) + 1, false)"#,
            #"INSERT INTO "s"."dog__toys" ("dog_pk", "toys_pk") SELECT "animal_pk", "toys_pk" FROM "s"."animal__toys" WHERE "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog'))"#,
            #"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal'))"#,
            #"ALTER TABLE "s"."dog__toys" ADD CONSTRAINT "dog__toys_dog_pk_fkey" FOREIGN KEY ("dog_pk") REFERENCES "s"."dog" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."dog__toys" ADD CONSTRAINT "dog__toys_toys_pk_fkey" FOREIGN KEY ("toys_pk") REFERENCES "s"."toy" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "dog__toys_toys_pk_idx" ON "s"."dog__toys" ("toys_pk")"#,
        ]),
        .init("making a to-one to-many moves the links into a join table", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"""
            CREATE TABLE "s"."chef__recipes" (
                "chef_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                PRIMARY KEY ("chef_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."chef__recipes" ("chef_pk", "recipes_pk") SELECT "chef_pk", "_pk" FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."recipe" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "chef__recipes_recipes_pk_idx" ON "s"."chef__recipes" ("recipes_pk")"#,
        ]),
        .init("making an ordered to-one to-many keeps the order in the join table",
              from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"""
            CREATE TABLE "s"."chef__recipes" (
                "chef_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                "recipes_order" integer,
                PRIMARY KEY ("chef_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."chef__recipes" ("chef_pk", "recipes_pk", "recipes_order") SELECT "chef_pk", "_pk", "chef_order" FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_order""#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."recipe" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "chef__recipes_recipes_pk_idx" ON "s"."chef__recipes" ("recipes_pk")"#,
        ]),
        .init("a rename that changes which side owns a many-to-many copies the links into the new join table", from: manyToMany,
              to: "Treat: {renamingIdentifier: Recipe, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}\nTag: {relationships: {recipes: {destination: Treat, inverse: tags, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_entity_check""#,
            #"ALTER TABLE "s"."recipe" RENAME TO "treat""#,
            #"ALTER TABLE "s"."treat" RENAME CONSTRAINT "recipe_pkey" TO "treat_pkey""#,
            #"ALTER SEQUENCE "s"."recipe__pk_seq" RENAME TO "treat__pk_seq""#,
            #"UPDATE "s"."treat" SET "_entity" = CASE "_entity" WHEN 'Recipe' THEN 'Treat' END WHERE "_entity" IN ('Recipe')"#,
            #"ALTER TABLE "s"."treat" ALTER COLUMN "_entity" SET DEFAULT 'Treat'"#,
            #"""
            CREATE TABLE "s"."tag__recipes" (
                "tag_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                PRIMARY KEY ("tag_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."tag__recipes" ("tag_pk", "recipes_pk") SELECT "tags_pk", "recipe_pk" FROM "s"."recipe__tags""#,
            #"DROP TABLE "s"."recipe__tags""#,
            #"ALTER TABLE "s"."treat" ADD CONSTRAINT "treat_entity_check" CHECK ("_entity" IN ('Treat'))"#,
            #"ALTER TABLE "s"."tag__recipes" ADD CONSTRAINT "tag__recipes_tag_pk_fkey" FOREIGN KEY ("tag_pk") REFERENCES "s"."tag" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."tag__recipes" ADD CONSTRAINT "tag__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."treat" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "tag__recipes_recipes_pk_idx" ON "s"."tag__recipes" ("recipes_pk")"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
