import Testing
import Mapping
import ObjectModel
@testable import Planning

/// What is beside a store decides the plan in Planning, from the snapshot alone: a store name
/// in a neighbour's place, a schema in a heavyweight step's place that is not its own, what the
/// application built on the tables a heavyweight step replaces, the passes an interrupted run
/// committed. The engine only reads these facts (`StoreMigrator.plan`).
@Suite struct StoreSurroundingsTests {
    typealias H = HeavyweightMigrationTests

    static let model: VersionedModel = {
        let versions = try! [H.version("Kitchen 1", H.source), H.version("Kitchen 2", H.destination)]
        return VersionedModel(name: "Kitchen", versions: versions, currentVersionName: "Kitchen 2", path: "kitchen", format: .native)
    }()

    static let mapping = ExplicitMapping(H.mapping)

    static func plan(_ surroundings: StoreSurroundings, at version: String? = "Kitchen 1", store: String = "shop") throws -> MigrationPlan {
        let metadata = version.flatMap { name in
            model.version(named: name).map {
                let hashes = VersionHash.hashes(of: $0)
                return StoreMetadata(modelName: "Kitchen", versionName: name, modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
            }
        }
        var snapshot = StoreSnapshot(store: store, schemaExists: metadata != nil, metadata: metadata)
        snapshot.surroundings = surroundings
        return try Planner.plan(model: model, snapshot: snapshot, explicitMappings: [mapping])
    }

    static let absent = NeighbourSchema(present: false, isStore: false, record: nil)

    @Test func nothingBesideTheStoreBlocksNothingAndNoPassIsDone() throws {
        var facts = StoreSurroundings()
        facts.recordsSchemas = true
        facts.neighbours = ["shop~staging": Self.absent, "shop~": Self.absent, "shop~retired": Self.absent]
        let plan = try Self.plan(facts)
        #expect(plan.steps.map(\.kind) == [.heavyweight])
        #expect(plan.blockerDetails.isEmpty)
        #expect(plan.steps[0].staged?.passesDone == 0)
    }

    @Test func aSchemaInTheStagingPlaceNotRecordedAsOursIsABlocker() throws {
        var facts = StoreSurroundings()
        facts.recordsSchemas = true
        facts.neighbours = ["shop~staging": NeighbourSchema(present: true, isStore: false, record: nil), "shop~": Self.absent]
        let plan = try Self.plan(facts)
        #expect(plan.blockerDetails.map(\.code) == [.foreignSchema])
        #expect(plan.blockerDetails.first?.message.hasPrefix("schema \"shop~staging\" exists and was not made by orchestrator as the staging schema of store shop") == true)
        // Recorded as this store's staging schema: its own, no blocker.
        facts.neighbours["shop~staging"]?.record = NeighbourSchema.Record(store: "shop", role: .staging)
        #expect(try Self.plan(facts).blockerDetails.isEmpty)
        // Recorded for another store, or as a store of its own: a blocker again.
        facts.neighbours["shop~staging"]?.record = NeighbourSchema.Record(store: "other", role: .staging)
        #expect(try Self.plan(facts).blockerDetails.map(\.code) == [.foreignSchema])
        facts.neighbours["shop~"] = NeighbourSchema(present: true, isStore: true, record: nil)
        #expect(try Self.plan(facts).blockerDetails.last?.message.contains("which would be the backup of store shop, is a store of its own") == true)
        // Metadata of layout 1 records no schemas: nothing is checked.
        facts.recordsSchemas = false
        #expect(try Self.plan(facts).blockerDetails.isEmpty)
    }

    @Test func theApplicationsObjectsOnTheTablesAreBlockersOfAHeavyweightStep() throws {
        var facts = StoreSurroundings()
        facts.dependents = [StoreDependent(object: "view public.names", table: "recipe")]
        let plan = try Self.plan(facts)
        #expect(plan.blockerDetails.map(\.code) == [.dependentObjects])
        #expect(plan.blockerDetails.first?.message == "view public.names on shop.recipe (step 1 of 1 replaces every table of shop): drop it before migrating and create it again after (docs/store-format.md, \"What the application added\")")
        // Up to date: nothing to replace.
        #expect(try Self.plan(facts, at: "Kitchen 2").blockerDetails.isEmpty)
    }

    @Test func passesCommittedCountOnlyForTheSameStepAndWithItsStagingSchema() throws {
        var facts = StoreSurroundings()
        let digest = try Self.plan(facts).steps[0].digest
        facts.passesCommitted = [CommittedPass(pass: 0, stepDigest: digest), CommittedPass(pass: 1, stepDigest: digest), CommittedPass(pass: 2, stepDigest: digest)]
        // No staging schema: nothing was kept.
        #expect(try Self.plan(facts).steps[0].staged?.passesDone == 0)
        facts.neighbours["shop~staging"] = NeighbourSchema(present: true, isStore: false, record: NeighbourSchema.Record(store: "shop", role: .staging))
        #expect(try Self.plan(facts).steps[0].staged?.passesDone == 2)
        // One pass recorded for another plan: none is taken (apply refuses the leftovers).
        facts.passesCommitted.append(CommittedPass(pass: 3, stepDigest: "another plan"))
        #expect(try Self.plan(facts).steps[0].staged?.passesDone == 0)
    }

    @Test("an interrupted run's checkpoints decide in Planning which phases are done, a mismatch, or a fresh start")
    func theEarlierRunDecidesTheDonePhases() throws {
        var facts = StoreSurroundings()
        let fresh = try #require(try Self.plan(facts).steps[0].staged)
        #expect(fresh.resume == .decided(.fresh))
        #expect(fresh.phases.allSatisfy { !$0.isDone })
        let digest = try Self.plan(facts).steps[0].digest
        let passes = fresh.phases.compactMap { phase -> [Int]? in
            if case .passes(let numbers) = phase.kind { return numbers }
            return nil
        }.flatMap { $0 }
        facts.neighbours["shop~staging"] = NeighbourSchema(present: true, isStore: false, record: NeighbourSchema.Record(store: "shop", role: .staging))
        let done = Checkpoint(pass: 1, rows: 0, changesSeen: 0, tableRows: [:])
        facts.earlierRun = EarlierRun(hasCheckpointTable: true, fingerprints: [digest, digest], checkpoints: [done])
        let resumed = try #require(try Self.plan(facts).steps[0].staged)
        #expect(resumed.resume == .decided(ResumeDecision(startsAfresh: false, done: [1: done])))
        // The install and pass 1 are done; every other phase is left, in the same order.
        #expect(resumed.phases.filter(\.isDone).map(\.kind) == [.install, .passes([1])])
        #expect(resumed.phases.map(\.kind) == fresh.phases.map(\.kind))
        #expect(passes.first == 1)
        // Another plan's checkpoints: a mismatch, thrown when the step runs, with today's text.
        facts.earlierRun?.fingerprints.append("another plan")
        guard case .mismatch(let mismatch) = try Self.plan(facts).steps[0].staged?.resume else {
            Issue.record("expected a mismatch")
            return
        }
        #expect(mismatch.description == "schema shop~staging holds passes of another migration plan of this store (the model, mapping model or options changed since); nothing was changed (run apply with --restart to discard it and start over)")
        // --restart starts afresh over them.
        var snapshot = StoreSnapshot(store: "shop", schemaExists: true, metadata: Self.metadata)
        snapshot.surroundings = facts
        var options = PlanningOptions()
        options.restart = true
        let restarted = try Planner.plan(model: Self.model, snapshot: snapshot, explicitMappings: [Self.mapping], options: options)
        #expect(restarted.steps[0].staged?.resume == .decided(.fresh))
    }

    static var metadata: StoreMetadata {
        let hashes = VersionHash.hashes(of: model.version(named: "Kitchen 1")!)
        return StoreMetadata(modelName: "Kitchen", versionName: "Kitchen 1", modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
    }

    @Test func aMissingStoreWhoseNameIsTakenIsABlocker() throws {
        #expect(try Self.plan(StoreSurroundings(), at: nil, store: "shop~").blockerDetails.first?.message.contains("ends with '~'") == true)
        var facts = StoreSurroundings()
        facts.storesInDerivedPlaces = ["shop~staging", "shop~"]
        #expect(try Self.plan(facts, at: nil).blockerDetails.map(\.message) == ["store name shop would have its backup and staging schemas where store shop~ is; choose another name"])
        facts = StoreSurroundings()
        facts.nameRecordedAs = NeighbourSchema.Record(store: "cafe", role: .backup)
        #expect(try Self.plan(facts, at: nil).blockerDetails.map(\.message) == ["store name shop is the backup of store cafe; choose another name"])
        #expect(try Self.plan(facts, at: nil).blockerDetails.map(\.code) == [.storeNameConflict])
        #expect(try Self.plan(StoreSurroundings(), at: nil).blockerDetails.isEmpty)
    }
}
