import Foundation
import Mapping
import ObjectModel
import Planning
import SQLBuilding
import Testing
import TestSupport

/// A planned statement's text is the whole statement (what `plan` prints, the history records and
/// a checkpoint's fingerprint hashes): `PlannedStatement` refuses bound values by precondition.
@Suite struct PlannedStatementTests {
    @Test("a statement with a bound value stops at the precondition")
    func boundValueIsRefused() async {
        await #expect(processExitsWith: .failure) {
            _ = PlannedStatement("DELETE FROM recipe WHERE name = \("soup")", lock: .rowExclusive, summary: "a bound value")
        }
    }

    @Test("values written as literals make a planned statement")
    func literalsAreAccepted() {
        let statement = PlannedStatement("DELETE FROM recipe WHERE name = \(literal: "soup")", lock: .rowExclusive, summary: "literal")
        #expect(statement.sql.text == "DELETE FROM recipe WHERE name = 'soup'")
    }

    /// Each statement a plan holds: its steps', passes', swaps', write guards' and change tracking's.
    static func statements(of plan: MigrationPlan) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        for step in plan.steps {
            statements += step.statements
            guard let work = step.staged else { continue }
            statements += work.passes.flatMap(\.statements)
            statements += work.swap
            statements += work.changeTracking.install
            statements.append(work.writeGuard)
        }
        return statements
    }

    static func snapshot(at version: ModelVersion) -> StoreSnapshot {
        let hashes = VersionHash.hashes(of: version)
        return StoreSnapshot(
            store: "corpus", schemaExists: true,
            metadata: StoreMetadata(
                modelName: "corpus", versionName: version.name, modelHash: hashes.model, entityHashes: hashes.entities,
                versionIdentifiers: version.versionIdentifiers
            )
        )
    }

    /// Creating every usable version of every corpus bundle, and the inferred step of each
    /// consecutive pair that runs in place: a bound value anywhere would stop the test process
    /// at the precondition.
    @Test("every statement planned for the corpus's versions and pairs is its text alone")
    func corpusPlansCarryNoBinds() throws {
        var statements = 0
        var lightweightSteps = 0
        for bundle in Corpus.bundles {
            guard let model = try? ModelLoader.loadEachVersion(path: bundle.fullPath) else { continue }
            let usable = bundle.versions.filter { model.problems(ofVersion: $0).isEmpty }.compactMap { model.version(named: $0) }
            for version in usable {
                statements += CreateStore.statements(for: StoreLayout(version: version, schema: "corpus")).count
            }
            for (source, destination) in zip(usable, usable.dropFirst()) {
                guard case .inferable(let mapping) = MappingInference.infer(from: source, to: destination),
                      let step = try? LightweightMigration.step(for: mapping, from: source, to: destination, schema: "corpus") else { continue }
                statements += step.statements.count
                lightweightSteps += 1
            }
        }
        #expect(lightweightSteps > 50, "expected the corpus at \(Corpus.root)")
        #expect(statements > 1000)
    }

    /// The corpus's mapping models, with their policies registered.
    @Test("every statement of the corpus's heavyweight plans is its text alone")
    func corpusMappingPlansCarryNoBinds() throws {
        var heavyweightSteps = 0
        var statements = 0
        var models: [String: VersionedModel] = [:]
        for package in Corpus.mappingPackages {
            let mapping = try MappingModelLoader.load(path: package.fullPath)
            guard let bundle = Corpus.bundles.first(where: {
                $0.repository == package.repository && $0.versions.contains(mapping.source) && $0.versions.contains(mapping.destination)
            }) else { continue }
            // Several mapping models share a bundle: read it once.
            let model = try models[bundle.fullPath] ?? ModelLoader.loadEachVersion(path: bundle.fullPath)
            models[bundle.fullPath] = model
            let policies = Set(mapping.entityMappings.compactMap(\.policy))
            let plan = try Planner.plan(
                model: model, targetVersion: mapping.destination, snapshot: Self.snapshot(at: model.version(named: mapping.source)!),
                explicitMappings: [ExplicitMapping(mapping)], options: PlanningOptions(registeredPolicies: policies)
            )
            heavyweightSteps += plan.steps.filter { $0.kind == .heavyweight }.count
            statements += Self.statements(of: plan).count
        }
        #expect(heavyweightSteps > 20, "expected the corpus's mapping models at \(Corpus.root)")
        #expect(statements > 1000)
    }
}
