import Testing
import Mapping
@testable import Planning

/// How stage 1 loads the new tables: bare, the primary key built after the rows, and which
/// passes wait for others under `apply --jobs`.
@Suite struct StageOneLoadsTests {
    typealias Kitchen = HeavyweightMigrationTests

    static func createTable(_ table: String, in step: PlannedStep) -> String? {
        step.passes.first?.statements.first { $0.sql.text.hasPrefix("CREATE TABLE \"shop~staging\".\"\(table)\"") }?.sql.text
    }

    static func stageOne(_ mapping: String, in step: PlannedStep) -> PlannedPass? {
        step.passes.first { $0.stage == .createInstances && $0.entityMapping == mapping }
    }

    @Test("tables set-based passes alone fill are created without their primary key, which the pass filling them builds after its rows")
    func setBasedTablesGetTheirKeyAfterTheRows() throws {
        let step = try Kitchen.step()
        for (table, mapping) in [("chef", "ChefToChef"), ("recipe", "RecipeToRecipe")] {
            let created = try #require(Self.createTable(table, in: step))
            #expect(!created.contains("PRIMARY KEY"), "\(created)")
            let pass = try #require(Self.stageOne(mapping, in: step))
            #expect(pass.statements.last?.sql.text == "ALTER TABLE \"shop~staging\".\"\(table)\" ADD PRIMARY KEY (\"_pk\")")
            #expect(pass.statements.last?.lock == .accessExclusive)
            #expect(pass.statements.filter { $0.lock == .rowExclusive }.last?.sql.text.hasPrefix("INSERT INTO \"shop~staging\".\"\(table)\"") == true)
        }
        // Recipes link to chefs by the chefs' kept keys: neither pass reads the other's rows.
        #expect(step.passes.map(\.waitsFor) == step.passes.map { _ in [] })
    }

    @Test("a step with a policy, which may insert into any table, creates every table with its primary key")
    func aPolicyKeepsEveryKeyInTheCreateTable() throws {
        var withPolicy = Kitchen.mapping
        withPolicy.entityMappings[1].policy = "RatingPolicy"
        let step = try HeavyweightMigration.step(
            mapping: withPolicy, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", Kitchen.destination), schema: "shop",
            options: PlanningOptions(registeredPolicies: ["RatingPolicy"])
        )
        for table in ["chef", "recipe"] { #expect(Self.createTable(table, in: step)?.contains("PRIMARY KEY (\"_pk\")") == true) }
        #expect(!step.statements.contains { $0.sql.text.contains("ADD PRIMARY KEY") })
    }

    @Test("a pass whose INSERT reads another entity mapping's association waits for that mapping's pass")
    func aLinkThroughTheAssociationWaitsForItsMapping() throws {
        var filtered = Kitchen.mapping
        filtered.entityMappings[0].filter = "name != 'nobody'"
        let step = try Kitchen.step(filtered)
        #expect(Self.stageOne("ChefToChef", in: step)?.waitsFor == [])
        #expect(Self.stageOne("RecipeToRecipe", in: step)?.waitsFor == ["ChefToChef"])
        #expect(Self.stageOne("RecipeToRecipe", in: step)?.statements.contains { $0.sql.text.contains("\"_association\" AS \"l.author_pk\"") } == true)
    }
}
