import Foundation
import Mapping
import ObjectModel
import Planning
import PostgresClient
import Testing
import TestSupport
@testable import Engine

/// A failed step's error, as `apply` prints it, says what to do next: the server's DETAIL and
/// HINT follow its message, then the state the store is left in.
@Suite(integration) struct StepFailureTests {
    typealias S = MigratedStore

    @Test("a data pre-check that stops a step prints the hint it raises")
    func preCheckPrintsItsHint() throws {
        let chef = "Chef: {relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}"
        let model = try S.model([
            ("v1", S.version("Recipe: {relationships: {chef: {destination: Chef, inverse: recipes}}}\n" + chef)),
            ("v2", S.version("Recipe: {relationships: {chef: {destination: Chef, inverse: recipes, optional: false}}}\n" + chef)),
        ])
        try S.withStore(model, rows: 40) { connection in
            let failure = try #require(#expect(throws: StepFailure.self) { try S.migrate(model, on: connection) })
            let error = try #require(failure.underlying as? PostgresError)
            #expect(error.sqlState == .checkViolation)
            let hint = try #require(error.hint)
            #expect(!hint.isEmpty)
            #expect(failure.description.hasSuffix(": \(error); hint: \(hint); the store is at 'v1'"), "\(failure)")
            #expect(try S.version(on: connection) == "v1")
        }
    }

    @Test("a unique index that duplicates stop, in a heavyweight step, prints the server's detail naming the key")
    func uniqueViolationPrintsItsDetail() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, notes: string}, uniquenessConstraints: [[name]]}")),
        ])
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        ], file: "v1-to-v2.yaml")
        try S.withStore(model, rows: 20) { connection in
            try connection.execute("UPDATE shop.recipe SET name = 'soup' WHERE _pk IN (SELECT _pk FROM shop.recipe ORDER BY _pk LIMIT 2)")
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
            let failure = try #require(#expect(throws: StepFailure.self) { try migrator.apply() })
            let error = try #require(failure.underlying as? PostgresError)
            #expect(error.sqlState == .uniqueViolation)
            #expect(error.detail == "Key (name)=(soup) is duplicated.")
            #expect(failure.description.contains(": \(error); detail: Key (name)=(soup) is duplicated.; the store is at 'v1'; the passes done are kept"), "\(failure)")
            // The detail may quote row values: the history keeps the error without it.
            let recorded = try connection.execute("SELECT error FROM orchestrator.migrations WHERE outcome = 'failed'").rows
            #expect(recorded.count == 1 && recorded[0][0]?.contains("soup") == false, "\(recorded)")
            #expect(try S.version(on: connection) == "v1")
        }
    }
}
