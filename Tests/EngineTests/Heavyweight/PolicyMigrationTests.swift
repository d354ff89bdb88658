import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import TestSupport
import ExamplePolicies
@testable import Engine

/// Custom entity migration policies and policy functions, run on the streaming path over
/// stores holding rows.
@Suite(integration) struct PolicyMigrationTests {
    typealias S = MigratedStore

    /// A Person with its address inline becomes a Person pointing at a unique Address.
    static func people() throws -> VersionedModel {
        try S.model([
            ("People 1", S.version("Person: {attributes: {name: string, street: string, city: string}}")),
            ("People 2", S.version("""
                Person: {attributes: {name: string}, relationships: {address: {destination: Address, inverse: residents}}}
                Address: {attributes: {street: string, city: string}, uniquenessConstraints: [[street, city]], relationships: {residents: {destination: Person, inverse: address, toMany: true}}}
                """)),
        ])
    }

    static func migrator(_ model: VersionedModel, _ mapping: MappingModel, _ policies: [String: @Sendable () -> any EntityMigrationPolicy], on connection: PostgresConnection) -> StoreMigrator {
        var migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
        migrator.policies = PolicyRegistry()
        for (name, make) in policies { migrator.policies.register(name, make) }
        return migrator
    }

    @Test func aPolicySplitsPersonIntoPersonAndAUniqueAddress() throws {
        let model = try Self.people()
        let mapping = MappingModel(source: "People 1", destination: "People 2", entityMappings: [
            EntityMappingDefinition(name: "PersonToPerson", type: .custom, sourceEntity: "Person", destinationEntity: "Person", policy: "PersonSplit"),
        ], file: "people.yaml")
        try S.withStore(model, rows: 0) { connection in
            // 240 people at 60 distinct addresses (street i % 15, city i % 4).
            try connection.execute("""
                INSERT INTO shop.person (name, street, city)
                SELECT 'person ' || i, 'street ' || (i % 15), 'city ' || (i % 4) FROM generate_series(1, 240) AS i
                """)
            let before = try connection.execute("SELECT name, street, city FROM shop.person ORDER BY name").rows

            // Unregistered, the policy stops the plan, naming it.
            let unregistered = try Self.migrator(model, mapping, [:], on: connection).plan()
            #expect(unregistered.blockers.count == 1 && unregistered.blockers[0].contains("custom policy 'PersonSplit' is not registered"))

            let migrator = Self.migrator(model, mapping, ["PersonSplit": { PersonSplitPolicy() }], on: connection)
            let plan = try migrator.plan()
            #expect(plan.steps.first?.passes.map(\.execution) == [.setBased, .streaming, .streaming, .setBased])
            let report = try migrator.apply()
            #expect(report.appliedSteps.map(\.rows) == [300], "240 people and 60 addresses written")

            let after = try connection.execute("""
                SELECT p.name, a.street, a.city FROM shop.person p JOIN shop.address a ON a._pk = p.address_pk ORDER BY p.name
                """).rows
            #expect(after == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.address").int(0, "n") == 60)
            #expect(try connection.execute("SELECT count(DISTINCT (street, city)) AS n FROM shop.address").int(0, "n") == 60)
            // The uniqueness constraint is in place and holds.
            #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO shop.address (street, city) VALUES ('street 1', 'city 1')")
            }
            #expect(try S.version(on: connection) == "People 2")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Encodes a string as its UTF-8 bytes.
    final class NoteEncodingPolicy: EntityMigrationPolicy {
        func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value {
            guard selector == "utf8DataFromString:", case .value(let value)? = arguments.first else {
                throw PolicyError(message: "NoteEncoding has no function \(selector)")
            }
            switch value {
            case .null: return .null
            case .string(let text): return .bytes(Array(text.utf8))
            default: throw PolicyError(message: "utf8DataFromString: needs a string")
            }
        }
    }

    @Test func aPolicyFunctionReencodesAStringAttributeAsBinary() throws {
        let model = try S.model([
            ("Notes 1", S.version("Note: {attributes: {title: string, body: string}}")),
            ("Notes 2", S.version("Note: {attributes: {title: string, body: binary}}")),
        ])
        let mapping = MappingModel(source: "Notes 1", destination: "Notes 2", entityMappings: [
            EntityMappingDefinition(
                name: "NoteToNote", type: .transform, sourceEntity: "Note", destinationEntity: "Note", policy: "NoteEncoding",
                attributeMappings: [PropertyMappingDefinition(name: "body", valueExpression: #"FUNCTION($entityPolicy, "utf8DataFromString:", $source.body)"#)]
            ),
        ], file: "notes.yaml")
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.note SET body = 'crème brûlée, 東京 ' || _pk WHERE _pk % 7 = 0")
            let before = try S.rows("note", ["title", "body"], on: connection)
            #expect(before.contains { $0[2] == nil } && before.contains { $0[2]?.contains("東京") == true })

            _ = try Self.migrator(model, mapping, ["NoteEncoding": { NoteEncodingPolicy() }], on: connection)
                .apply(options: ApplyOptions(batchSize: 64))

            #expect(try connection.execute("SELECT data_type FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'note' AND column_name = 'body'").value(0, "data_type") == "bytea")
            let decoded = try connection.execute("SELECT _pk, title, convert_from(body, 'UTF8') AS body FROM shop.note ORDER BY _pk").rows
            #expect(decoded == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Records every hook call, in order, across the instances the engine makes.
    final class Recorder: @unchecked Sendable {
        let lock = NSLock()
        var calls: [String] = []
        var failRelationships = false
        func record(_ call: String) { lock.withLock { calls.append(call) } }
    }

    final class RecordingPolicy: EntityMigrationPolicy {
        let recorder: Recorder
        init(_ recorder: Recorder) { self.recorder = recorder }
        func begin(_ mapping: EntityMappingContext) throws { recorder.record("begin") }
        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            recorder.record("createDestinationInstances")
            try mapping.createDestinationInstance(for: source)
        }
        func endInstanceCreation(_ mapping: EntityMappingContext) throws { recorder.record("endInstanceCreation") }
        func createRelationships(for destination: DestinationInstance, _ mapping: EntityMappingContext) throws {
            if recorder.failRelationships { throw PolicyError(message: "injected failure in createRelationships") }
            recorder.record("createRelationships")
            // Every named recipe gets its chef's key in its name: stage 2 set it before this hook.
            if case .string(let name) = destination["name"] {
                destination["name"] = .string("\(name) by \(destination.relationship("author").map(String.init) ?? "nobody")")
            }
        }
        func endRelationshipCreation(_ mapping: EntityMappingContext) throws { recorder.record("endRelationshipCreation") }
        func performCustomValidation(_ mapping: EntityMappingContext) throws {
            recorder.record("performCustomValidation")
            let orphans = try mapping.query("SELECT count(*) AS n FROM \(ident: mapping.stagingSchema, "recipe") WHERE name IS NULL")
            if orphans.int(0, "n") != 0 { throw PolicyError(message: "recipes without a name") }
        }
        func end(_ mapping: EntityMappingContext) throws { recorder.record("end") }
    }

    /// The seven hooks run at their points, once per mapping or once per instance; a failure
    /// between passes leaves the store as it was, and the next apply continues after the
    /// last checkpoint.
    @Test func theSevenHooksRunInOrderAndAFailedRunResumesAfterItsLastCheckpoint() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Recording"
        let recorder = Recorder()
        recorder.failRelationships = true
        try S.withStore(model, rows: 50) { connection in
            try connection.execute("UPDATE shop.recipe SET name = 'recipe ' || _pk")
            let before = try HeavyweightMigrationTests.links(schema: S.store, column: "chef_pk", on: connection)
            let migrator = Self.migrator(model, mapping, ["Recording": { RecordingPolicy(recorder) }], on: connection)

            let failure = #expect(throws: StepFailure.self) { try migrator.apply() }
            #expect(failure?.description.contains("injected failure in createRelationships") == true)
            #expect(failure?.description.contains("apply again continues after them") == true)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try HeavyweightMigrationTests.links(schema: S.store, column: "chef_pk", on: connection) == before)
            #expect(try connection.execute("SELECT name FROM orchestrator.checkpoints WHERE store = 'shop' AND kind = 'heavyweight' AND pass > 0 ORDER BY pass").rows.map { $0[0] ?? "" }
                == ["prepare", "createInstances ChefToChef", "createInstances RecipeToRecipe"])
            #expect(recorder.calls == ["begin"] + Array(repeating: "createDestinationInstances", count: 50) + ["endInstanceCreation"])
            // plan tells how far the interrupted run got.
            #expect(try migrator.plan().steps.first?.staged?.passesDone == 3)

            // Fixed and run again: the three passes done are not run again (the author links are
            // set in stage 1, and Chef.recipes is their inverse: no pass of its own).
            recorder.failRelationships = false
            recorder.calls = []
            var events: [ProgressEvent] = []
            _ = try migrator.apply(onProgress: { events.append($0) })
            #expect(recorder.calls == Array(repeating: "createRelationships", count: 50) + ["endRelationshipCreation", "performCustomValidation", "end"])
            let finished = events.filter { $0.kind == .passFinished }
            #expect(finished.map(\.resumed) == [true, true, true, false, false, false])
            #expect(finished.map(\.stage.name) == ["prepare", "createInstances", "createInstances", "createRelationships", "validate", "swap"])
            #expect(finished.map(\.part) == [nil, nil, nil, .toMany, nil, nil])
            #expect(events.first?.kind == .stepStarted && events.last?.kind == .stepFinished)

            #expect(try S.version(on: connection) == "Kitchen 2")
            // Each recipe keeps its chef, and its name says the chef's new key.
            let after = try connection.execute("""
                SELECT r.name AS recipe, c.name AS chef, r.author_pk AS key FROM shop.recipe r LEFT JOIN shop.chef c ON c._pk = r.author_pk
                """).rows
            #expect(after.count == 50)
            let chefs = Dictionary(uniqueKeysWithValues: before.map { ($0[0] ?? "", $0[1]) })
            for row in after {
                let parts = (row[0] ?? "").components(separatedBy: " by ")
                #expect(parts.count == 2 && parts[1] == (row[2] ?? "nobody"), "\(row)")
                #expect(chefs[parts[0]] == .some(row[1]), "\(row)")
            }
            #expect(try S.history(on: connection) == ["create - -> Kitchen 1 succeeded", "heavyweight Kitchen 1 -> Kitchen 2 failed", "heavyweight Kitchen 1 -> Kitchen 2 succeeded"])
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'shop~staging'").int(0, "n") == 0)
        }
    }

    @Test func aPolicysValidationRejectingTheNewStoreLeavesTheOldOneInPlace() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Recording"
        try S.withStore(model, rows: 30) { connection in
            try connection.execute("UPDATE shop.recipe SET name = NULL WHERE _pk = 3")
            let failure = #expect(throws: StepFailure.self) {
                try Self.migrator(model, mapping, ["Recording": { RecordingPolicy(Recorder()) }], on: connection).apply()
            }
            #expect(failure?.description.contains("recipes without a name") == true)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 30)
        }
    }

    /// Names a recipe after its chef's key: the function gets the related object itself.
    final class ChefTagPolicy: EntityMigrationPolicy {
        func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value {
            guard case .value(.string(let name))? = arguments.first, case .object(let entity, let key)? = arguments.last else {
                throw PolicyError(message: "unexpected arguments \(arguments)")
            }
            return .string("\(name) [\(entity) \(key.map(String.init) ?? "none")]")
        }
    }

    @Test func aPolicyFunctionGetsARelatedObjectPassedOnItsOwn() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "ChefTag"
        mapping.entityMappings[1].attributeMappings.append(
            PropertyMappingDefinition(name: "name", valueExpression: #"FUNCTION($entityPolicy, "name:chef:", $source.name, $source.chef)"#)
        )
        try S.withStore(model, rows: 60) { connection in
            try connection.execute("UPDATE shop.recipe SET name = 'recipe ' || _pk")
            let before = try connection.execute("SELECT name, chef_pk FROM shop.recipe ORDER BY _pk").rows
            #expect(before.contains { $0[1] == nil } && before.contains { $0[1] != nil })
            _ = try Self.migrator(model, mapping, ["ChefTag": { ChefTagPolicy() }], on: connection).apply()
            let after = try connection.execute("SELECT name FROM shop.recipe ORDER BY _pk").rows.map { $0[0] ?? "" }
            #expect(after == before.map { "\($0[0] ?? "") [Chef \($0[1] ?? "none")]" })
        }
    }

    /// Sets an attribute the destination entity does not have.
    final class MisspellingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            let recipe = try mapping.createDestinationInstance(for: source)
            recipe["temperatureF"] = .double(1)
        }
    }

    @Test func aPolicySettingAnAttributeTheEntityLacksFailsNamingBoth() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Misspelling"
        try S.withStore(model, rows: 10) { (connection: PostgresConnection) throws in
            let failure = #expect(throws: StepFailure.self) {
                _ = try Self.migrator(model, mapping, ["Misspelling": { MisspellingPolicy() }], on: connection).apply()
            }
            #expect(failure?.description.contains("Recipe has no stored attribute 'temperatureF'") == true, "\(failure.map(String.init(describing:)) ?? "")")
            #expect(try S.version(on: connection) == "Kitchen 1")
        }
    }
}
