import Foundation
import Planning

/// A fleet plan saved by `fleet plan --out`, as `fleet apply --plan` reads it: the target, and
/// each cohort's stores with the plan of the store it was planned on (`savedPlan`, a plan as
/// `plan --out` saves one). Other keys of the file are for people and are not read.
public struct FleetPlanFile: Sendable {
    public var path: String
    public var target: String
    private var cohorts: [FleetStore: CohortPlan]

    private struct Document: Decodable {
        var target: String
        var cohorts: [Cohort]
    }

    private struct Cohort: Decodable {
        var stores: [String]
        var plannedOn: String
        var savedPlan: SavedPlan?
    }

    public static func read(from path: String) throws -> FleetPlanFile {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as DecodingError {
            throw SavedPlanUnreadable(file: path, reason: "it is not a fleet plan written by `orchestrator fleet plan --out` (\(SavedPlan.explain(error)))")
        } catch {
            throw SavedPlanUnreadable(file: path, reason: error.localizedDescription)
        }
        var cohorts: [FleetStore: CohortPlan] = [:]
        for cohort in document.cohorts {
            guard let saved = cohort.savedPlan else { continue }
            for name in cohort.stores {
                let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                cohorts[FleetStore(server: parts[0], store: parts[1])] = CohortPlan(saved: saved.upgradedFromLayoutThree(), plannedOn: cohort.plannedOn, file: path)
            }
        }
        return FleetPlanFile(path: path, target: document.target, cohorts: cohorts)
    }

    /// The plan `store` must find again under its lock: its cohort's, for its own schema.
    func expected(for store: FleetStore) throws -> CohortPlan {
        guard let plan = cohorts[store] else { throw StoreNotInFleetPlan(store: store, file: path) }
        return plan
    }
}

/// A cohort's saved plan, which each of its stores must find again, for its own schema, when
/// it is planned under its lock.
struct CohortPlan: Sendable {
    var saved: SavedPlan
    var plannedOn: String
    var file: String

    /// Throws `CohortPlanMismatch` unless `plan` is the cohort's, but for the schema it names.
    /// The fingerprints of the store's own metadata and catalog are its own; what must be the
    /// same is every model version, mapping model, option, step and statement.
    func requireSame(as plan: MigrationPlan, migrator: StoreMigrator, online: Bool) throws {
        let now = try SavedPlan(plan: plan, migrator: migrator, online: online)
        var expected = Self.retarget(saved, to: migrator.store)
        expected.fingerprints.storeMetadata = now.fingerprints.storeMetadata
        expected.fingerprints.storeCatalog = now.fingerprints.storeCatalog
        expected.storeVersion = now.storeVersion
        let differences = expected.differences(from: now)
        if !differences.isEmpty { throw CohortPlanMismatch(store: migrator.store, plannedOn: plannedOn, file: file, differences: differences) }
    }

    /// The plan with the schema it names (`store`, its staging schema, the store's name in the
    /// metadata's statements) replaced by `other`.
    static func retarget(_ plan: SavedPlan, to other: String) -> SavedPlan {
        guard other != plan.store else { return plan }
        let old = plan.store
        func swap(_ text: String) -> String {
            text.replacingOccurrences(of: "\"\(old)\"", with: "\"\(other)\"")
                .replacingOccurrences(of: "\"\(old)~", with: "\"\(other)~")
                .replacingOccurrences(of: "'\(old)'", with: "'\(other)'")
        }
        var copy = plan
        copy.store = other
        copy.steps = plan.steps.map { step in
            var step = step
            step.statements = step.statements.map(swap)
            step.writeGuard = step.writeGuard.map(swap)
            step.streamedReads = step.streamedReads.map(swap)
            return step
        }
        return copy
    }
}

/// `fleet apply --plan`: a store's plan under its lock is not its cohort's. Nothing was changed.
public struct CohortPlanMismatch: Error, CustomStringConvertible {
    public var store: String
    public var plannedOn: String
    public var file: String
    public var differences: [String]

    public var description: String {
        "store \(store)'s plan is not its cohort's (planned on \(plannedOn), saved in \(file)): \(differences.joined(separator: "; ")); "
            + "nothing was changed (run fleet plan --out again and review the new plan)"
    }
}

/// `fleet apply --plan`: a store the saved fleet plan has no cohort for.
public struct StoreNotInFleetPlan: Error, CustomStringConvertible {
    public var store: FleetStore
    public var file: String

    public var description: String {
        "store \(store) is in no cohort of the fleet plan \(file) (it needed no migration then, or is new); nothing was changed (run fleet plan --out again)"
    }
}
