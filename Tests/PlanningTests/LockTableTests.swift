import ObjectModel
@testable import Planning
import Testing

/// A model of thousands of entities created in one transaction ran the server out of lock
/// table ("out of shared memory"); the plan now says so beforehand, and what to set.
@Suite struct LockTableTests {
    /// `count` entities, each with a text attribute and a to-one to the one before.
    static func chainOfTables(_ count: Int) -> ModelVersion {
        ModelVersion(name: "v", entities: (0..<count).map { index in
            Entity(
                name: "E\(index)", attributes: [Attribute(name: "a", type: .string)],
                relationships: index == 0 ? [] : [Relationship(name: "previous", destination: "E\(index - 1)")]
            )
        })
    }

    static func plan(_ version: ModelVersion, lockTable: LockTableSettings) throws -> PlannedStep {
        let model = VersionedModel(name: "M", versions: [version], currentVersionName: "v", path: "m", format: .native)
        let snapshot = StoreSnapshot(store: "m", schemaExists: false, metadata: nil, lockTable: lockTable)
        return try #require(try Planner.plan(model: model, snapshot: snapshot).steps.first)
    }

    @Test("creating a store counts five relations per hierarchy table and one per index")
    func relationsLocked() {
        let layout = StoreLayout(version: Self.chainOfTables(5000), schema: "m")
        #expect(LockTableSettings.relationsLocked(creating: layout) == 5000 * 5 + 4999)
    }

    @Test("a create step that needs more locks than the server holds carries a hazard saying what to set")
    func tooManyLocks() throws {
        // PostgreSQL's defaults: 64 locks × (100 connections + 3 autovacuum workers + 1 + 8 workers + 10 WAL senders).
        let defaults = LockTableSettings(maxLocksPerTransaction: 64, backends: 122)
        let step = try Self.plan(Self.chainOfTables(5000), lockTable: defaults)
        #expect(step.hazards.map(\.code) == ["lockTableTooSmall"])
        #expect(step.hazards.first?.message.contains("locks about 29999 relations") == true)
        #expect(step.hazards.first?.message.contains("holds about 7808") == true)
        #expect(step.hazards.first?.message.contains("set max_locks_per_transaction to at least 308") == true)
        #expect(try Self.plan(Self.chainOfTables(1000), lockTable: defaults).hazards.isEmpty)
        #expect(try Self.plan(Self.chainOfTables(5000), lockTable: LockTableSettings(maxLocksPerTransaction: 256, backends: 122)).hazards.isEmpty)
    }
}
