import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Attributes added, removed, renamed, made optional or required, and widened, on a store
/// holding rows.
/// Proves Planning/Changes: AddColumn, DropColumn, RenameColumn, DropNotNull, BackfillNulls,
/// SetNotNull, AddCheck, ChangeColumnDefault, AlterColumnType.
@Suite(integration) struct AttributeMigrationTests {
    typealias S = MigratedStore

    @Test func addingAttributesKeepsEveryRowAndGivesThemTheDefault() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, notes: string, rating: {type: int16, optional: false, default: 3}, servings: {type: int32, default: 2}}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name", "notes", "rating", "servings"], on: connection) == before.map { $0 + [nil, "3", "2"] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func removingAnAttributeDropsItsValuesOnlyWithConsent() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, notes: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            let refusal = #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            #expect(refusal?.losses == ["step 1 of 1 ('v1' -> 'v2') Recipe.notes removed: its values are dropped"])
            #expect(try columns(in: S.store, table: "recipe", on: connection).map(\.name).contains("notes"))

            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try S.rows("recipe", ["name"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func renamingAnAttributeKeepsItsValuesUnderTheNewName() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, code: {type: string, optional: false}}, uniquenessConstraints: [[code]], indexes: {byName: [name]}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, reference: {type: string, optional: false, renamingIdentifier: code}}, uniquenessConstraints: [[reference]], indexes: {byName: [title]}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "code"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["title", "reference"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAnAttributeOptionalKeepsItsValuesAndAcceptsNull() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: {type: string, optional: false}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name"], on: connection) == before)
            try connection.execute("INSERT INTO shop.recipe (name) VALUES (NULL)")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func makingAnAttributeRequiredWithADefaultBackfillsItsNulls() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}}}")),
        ])
        try S.withStore(model) { connection in
            let ratings = try S.rows("recipe", ["name", "rating"], on: connection)
            let layers = try S.rows("dessert", ["_entity", "layers"], on: connection)
            #expect(ratings.contains { $0[2] == nil } && layers.contains { $0[1] == "Cake" && $0[2] == nil })
            try S.migrate(model, on: connection)
            #expect(try S.rows("recipe", ["name", "rating"], on: connection) == ratings.map { [$0[0], $0[1], $0[2] ?? "0"] })
            #expect(try S.rows("dessert", ["_entity", "layers"], on: connection) == layers.map { [$0[0], $0[1], $0[1] == "Cake" ? $0[2] ?? "1" : $0[2]] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func wideningKeepsEveryValueExactly() throws {
        let model = try S.model([
            ("v1", S.version("Reading: {attributes: {a: int16, b: int32, c: float, d: int64, e: {type: int16, default: 7}}, indexes: {byA: [a]}}")),
            ("v2", S.version("Reading: {attributes: {a: int32, b: int64, c: double, d: decimal, e: {type: decimal, default: 7}}, indexes: {byA: [a]}}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("reading", ["a", "b", "c", "d", "e"], on: connection)
            let report = try S.migrate(model, on: connection)
            #expect(report.appliedSteps.first?.step.hazards.map(\.code).contains("tableRewrite") == true)
            #expect(try S.rows("reading", ["a", "b", "c", "d", "e"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
