import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import Testing
import TestSupport
@testable import Engine

/// `apply` checks the drift before it takes the store's lock and again under it; the contract
/// of the store's version is built once (`ContractCatalogs`, for every migrator of the process
/// on servers that print it alike), and the store's own catalog is read at each check, so a
/// change made by hand between the two is still refused.
@Suite(integration) struct DriftUnderLockTests {
    typealias S = MigratedStore

    static var lockKey: Int64 { PostgresConnection.advisoryLockKey(for: "orchestrator:store:" + S.store) }

    /// v2 adds an optional attribute: a lightweight step, or a heavyweight one with a mapping.
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Recipe: {attributes: {name: {type: string, optional: false}, rating: int32}}")),
            ("v2", S.version("Recipe: {attributes: {name: {type: string, optional: false}, rating: int32, notes: string}}")),
        ])
    }

    @Test("apply refuses a store changed by hand while it waited for the store's lock, and changes nothing")
    func applyRefusesAStoreDriftedBeforeTheLock() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 30) { connection in
            let holder = try connection.reconnect()
            defer { holder.close() }
            try holder.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
            var migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            migrator.contracts = ContractCatalogs()
            var handChange: Error?
            var waits = 0
            let refused = try #require(#expect(throws: StoreDrifted.self) {
                try migrator.apply(options: ApplyOptions(lockWaitSeconds: 30), onLockWait: { _ in
                    // The plan before the lock found no drift; now the store changes, then the lock is free.
                    waits += 1
                    do {
                        try holder.execute("ALTER TABLE \(ident: S.store, "recipe") DROP COLUMN \(ident: "rating")")
                        try holder.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
                    } catch {
                        handChange = error
                    }
                })
            })
            #expect(handChange == nil, "\(handChange.map { "\($0)" } ?? "")")
            #expect(waits == 1)
            #expect(refused.version == "v1")
            #expect(refused.items.count == 1 && refused.description.contains("recipe.rating"), "\(refused)")
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.history(on: connection).filter { $0.contains("v2") } == [])
            #expect(try S.rows("recipe", ["name"], on: connection).count == 30)
            let notes = try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = \(S.store) AND column_name = 'notes'")
            #expect(notes.value(0, "n") == "0")
            // Both checks ran against one contract, built once: the cache did not hide the change.
            #expect(migrator.contracts.buildCount == 1)
        }
    }

    @Test("a migrator's second plan sees a change made by hand after its first, though the contract is built once")
    func theCachedContractCannotHideAChange() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 10) { connection in
            var migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            migrator.contracts = ContractCatalogs()
            #expect(try migrator.plan().steps.map(\.to) == ["v2"])
            try connection.execute("ALTER TABLE \(ident: S.store, "recipe") ALTER COLUMN \(ident: "name") DROP NOT NULL")
            let refused = try #require(#expect(throws: StoreDrifted.self) { try migrator.plan() })
            #expect(refused.items.count == 1 && refused.description.contains("recipe.name"), "\(refused)")
            #expect(migrator.contracts.buildCount == 1)

            try connection.execute("ALTER TABLE \(ident: S.store, "recipe") ALTER COLUMN \(ident: "name") SET NOT NULL")
            #expect(try migrator.plan().steps.map(\.to) == ["v2"])
            #expect(migrator.contracts.buildCount == 1)
        }
    }

    @Test("apply builds the contract of the store's version once, for a lightweight and for a heavyweight step")
    func applyBuildsTheContractOnce() throws {
        let model = try Self.model()
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        ], file: "v1-to-v2.yaml")
        for explicitMappings in [[], [ExplicitMapping(mapping)]] {
            try S.withStore(model, rows: 20) { connection in
                var migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: explicitMappings)
                migrator.contracts = ContractCatalogs()
                let report = try migrator.apply()
                #expect(report.appliedSteps.map(\.step.kind) == [explicitMappings.isEmpty ? .lightweight : .heavyweight])
                #expect(try S.version(on: connection) == "v2")
                #expect(try S.rows("recipe", ["name", "notes"], on: connection).count == 20)
                #expect(migrator.contracts.buildCount == 1)
            }
        }
    }

    @Test("migrators on other sessions share a contract, and a session printing dates in another time zone builds its own")
    func theContractIsSharedBySessionsThatPrintItAlike() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, added: {type: date, optional: false, default: '2020-01-01T00:00:00Z'}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, added: {type: date, optional: false, default: '2020-01-01T00:00:00Z'}, notes: string}}")),
        ])
        try S.withStore(model, rows: 10) { connection in
            let contracts = ContractCatalogs()
            func plannedSteps(on session: PostgresConnection) throws -> [String] {
                var migrator = StoreMigrator(connection: session, model: model, store: S.store)
                migrator.contracts = contracts
                return try migrator.plan().steps.map(\.to)
            }
            try connection.execute("SET TimeZone = 'UTC'")
            let other = try connection.reconnect()
            defer { other.close() }
            try other.execute("SET TimeZone = 'UTC'")
            #expect(try plannedSteps(on: connection) == ["v2"])
            #expect(try plannedSteps(on: other) == ["v2"])
            #expect(contracts.buildCount == 1)

            // The store's default now prints as 2020-01-01 09:00:00+09: a contract printed in
            // UTC would differ from it.
            try other.execute("SET TimeZone = 'Asia/Tokyo'")
            let added = try other.execute("SELECT pg_get_expr(d.adbin, d.adrelid) AS text FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = \(S.store + ".recipe")::regclass AND a.attname = 'added'")
            #expect(added.value(0, "text")?.contains("+09") == true, "\(added.rows)")
            #expect(try plannedSteps(on: other) == ["v2"])
            #expect(contracts.buildCount == 2)
            #expect(try plannedSteps(on: connection) == ["v2"])
            #expect(contracts.buildCount == 2)
        }
    }
}
