import ObjectModel
import Planning

extension FleetPlanFile {
    /// Per step of `plan`, SHA-256 of what its online phases run (each phase's execution, its
    /// statements and its batch statement: for `--expand` the views and their triggers too),
    /// read as if planned for store `store` (default: the store `plan` names); nil for a step
    /// without online phases. `fleet plan --out` saves them as each cohort's `phaseDigests`:
    /// the saved plan's statements are the offline form only, and a step's own digest names
    /// its store.
    public static func phaseDigests(of plan: MigrationPlan, as store: String? = nil) -> [String?] {
        let rename = CohortPlan.renaming(plan.store, to: store ?? plan.store, versions: plan.steps.compactMap(\.from))
        return plan.steps.map { step in
            guard let phases = step.phases?.phases else { return nil }
            let text = phases.map { phase in
                ([phase.execution.rawValue] + phase.statements.map(\.sql.text) + [phase.batches?.template.text ?? ""]).map(rename).joined(separator: "\n")
            }
            return VersionHash.digest(of: text.joined(separator: "\n;\n"))
        }
    }
}

extension CohortPlan {
    /// The steps whose online phases differ from the cohort's, read for the store the cohort
    /// was planned on; none when the file has no phase digests.
    func phaseDifferences(_ plan: MigrationPlan) -> [String] {
        guard let phaseDigests else { return [] }
        let now = FleetPlanFile.phaseDigests(of: plan, as: saved.store)
        return zip(phaseDigests, now).enumerated().compactMap { index, pair in
            pair.0 == pair.1 ? nil : "step \(index + 1): its online phases (what each runs, with --expand the previous version's views) are not the cohort's"
        }
    }
}
