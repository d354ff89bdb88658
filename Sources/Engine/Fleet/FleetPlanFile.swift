import Foundation
import Planning

/// A fleet plan saved by `fleet plan --out`, as `fleet apply --plan` reads it: the target, and
/// each cohort's stores with the plan of the store it was planned on (`savedPlan`, a plan as
/// `plan --out` saves one). Other keys of the file are for people and are not read.
public struct FleetPlanFile: Sendable {
    public var path: String
    public var target: String
    /// How the plan was saved to run: `fleet plan --online` or `--expand` (then online too);
    /// the same for every cohort, as one `fleet plan` saves them.
    public var online = false
    public var expand = false
    private var cohorts: [FleetStore: CohortPlan]

    private struct Document: Decodable {
        var target: String
        /// `online` or `expand`; absent from a plan made without either, and from one saved
        /// before the mode was written (its cohorts' options tell then).
        var mode: String?
        var cohorts: [Cohort]
    }

    private struct Cohort: Decodable {
        var stores: [String]
        var plannedOn: String
        var savedPlan: SavedPlan?
        /// Absent from a fleet plan saved before the phases were compared.
        var phaseDigests: [String?]?
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
        var file = FleetPlanFile(path: path, target: document.target, cohorts: [:])
        file.online = document.mode == PlanMode.online.rawValue || document.mode == PlanMode.expand.rawValue
        file.expand = document.mode == PlanMode.expand.rawValue
        for cohort in document.cohorts {
            guard let saved = cohort.savedPlan else { continue }
            file.online = file.online || saved.fingerprints.options.online
            file.expand = file.expand || saved.fingerprints.options.expand
            for name in cohort.stores {
                let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                cohorts[FleetStore(server: parts[0], store: parts[1])] = CohortPlan(
                    saved: saved.upgradedFromLayoutThree(), plannedOn: cohort.plannedOn, file: path, phaseDigests: cohort.phaseDigests
                )
            }
        }
        file.cohorts = cohorts
        return file
    }

    /// Refuses, before anything runs, a file saved for another mode than `fleet apply`'s
    /// flags (`online`, `expand`), naming both.
    public func requireMode(online: Bool, expand: Bool) throws {
        guard self.expand != expand || self.online != (online || expand) else { return }
        throw FleetPlanModeMismatch(file: path, saved: Self.mode(online: self.online, expand: self.expand), now: Self.mode(online: online, expand: expand))
    }

    static func mode(online: Bool, expand: Bool) -> String {
        expand ? "fleet apply --expand" : online ? "fleet apply --online" : "fleet apply (neither --online nor --expand)"
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
    /// `FleetPlanFile.phaseDigests` of the cohort's plan, when the file has them.
    var phaseDigests: [String?]?

    /// Throws `CohortPlanMismatch` unless `plan` is the cohort's, but for the schema it names.
    /// The fingerprints of the store's own metadata and catalog are its own; what must be the
    /// same is every model version, mapping model, option, step and statement.
    func requireSame(as plan: MigrationPlan, migrator: StoreMigrator, online: Bool, expand: Bool) throws {
        let now = try SavedPlan(plan: plan, migrator: migrator, online: online, expand: expand)
        var expected = Self.retarget(saved, to: migrator.store)
        expected.fingerprints.storeMetadata = now.fingerprints.storeMetadata
        expected.fingerprints.storeCatalog = now.fingerprints.storeCatalog
        expected.storeVersion = now.storeVersion
        var differences = expected.differences(from: now)
        if differences.isEmpty { differences = phaseDifferences(plan) }
        if !differences.isEmpty { throw CohortPlanMismatch(store: migrator.store, plannedOn: plannedOn, file: file, differences: differences) }
    }

    /// The plan with the schema it names (`store`, its staging schema, the schema of views
    /// serving a step's source version under `--expand`, the store's name in the metadata's
    /// statements) replaced by `other`'s.
    static func retarget(_ plan: SavedPlan, to other: String) -> SavedPlan {
        guard other != plan.store else { return plan }
        let swap = renaming(plan.store, to: other, versions: plan.steps.compactMap(\.from))
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

    /// Replaces in SQL text the schemas named after store `old` (the store, its staging and
    /// backup schemas, the views serving each of `versions` under `--expand`, the store's name
    /// as a literal and in the comment on the views' schema, `OldVersionViews`') by those of
    /// `other`.
    static func renaming(_ old: String, to other: String, versions: [String]) -> (String) -> String {
        // `<store>@<version>` may be shortened past 63 bytes: each is named whole.
        let viewSchemas = Set(versions).sorted().map {
            (OldVersionViews.schemaName(store: old, version: $0), OldVersionViews.schemaName(store: other, version: $0))
        }
        return { text in
            viewSchemas.reduce(text) { $0.replacingOccurrences(of: "\"\($1.0)\"", with: "\"\($1.1)\"") }
                .replacingOccurrences(of: "\"\(old)\"", with: "\"\(other)\"")
                .replacingOccurrences(of: "\"\(old)~", with: "\"\(other)~")
                .replacingOccurrences(of: "'\(old)'", with: "'\(other)'")
                .replacingOccurrences(of: " of store \(old), ", with: " of store \(other), ")
        }
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

/// `fleet apply --plan`: the saved fleet plan was made for another mode (`fleet plan --online`,
/// `--expand`) than the apply's flags. Nothing was run.
public struct FleetPlanModeMismatch: Error, CustomStringConvertible {
    public var file: String
    public var saved: String
    public var now: String

    public var description: String {
        "the fleet plan \(file) was saved for \(saved), and this is \(now); nothing was changed (give the same flags, or run fleet plan --out again with these)"
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
