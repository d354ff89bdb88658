import ObjectModel

/// A step's one identity: SHA-256 (`VersionHash.digest(of:)`) of the work it plans. Saved
/// plans record it per step (`apply --plan` runs a step only when planning again gives the same
/// digest), heavyweight passes and online runs record it with each checkpoint
/// (`orchestrator.checkpoints`), so that a resumed run continues only the very step that was
/// interrupted.
///
/// The work: the step's kind and versions, then the passes (each statement and what a
/// streaming pass reads, with its policy) and online stage 3 (a build another version of it
/// made is not taken for this one's), the online phases (how each runs, its statements, its
/// batch statement), and, for a step without passes, its statements. The swap is left out, as
/// the checkpoints always did: `--no-backup` changes where the old store goes, not the work
/// done before.
extension PlannedStep {
    public var digest: String {
        if let identity { return identity.digest }
        return VersionHash.digest(of: (["step", kind.rawValue, from ?? "", to] + workParts + [phases?.digestedText ?? ""]).joined(separator: "\u{1}"))
    }

    /// The identities releases before metadata layout 4 recorded for this step's work, still
    /// accepted when resuming a run they left (then recorded again under `digest`): a
    /// heavyweight step's checkpoint fingerprint, an online run's SHA-256 plan digest, and
    /// before layout 3 its two FNV-1a hashes (16 hex digits).
    public var earlierDigests: [String] {
        if let identity { return identity.earlierDigests }
        var digests: [String] = []
        if kind == .heavyweight {
            digests.append(VersionHash.digest(of: ([from ?? "", to] + passParts).joined(separator: "\u{1}")))
        }
        if let text = phases?.digestedText {
            digests += [VersionHash.digest(of: text), OnlineTrigger.digest(text) + OnlineTrigger.digest(String(text.reversed()))]
        }
        return digests
    }

    /// Passes and online stage 3, as the heavyweight fingerprint hashed them.
    private var passParts: [String] {
        passes.flatMap { pass in pass.statements.map(\.sql.text) + [pass.stream.map { $0.sourceRows.text + ($0.policy ?? "") } ?? ""] }
            + (staged?.stageThree.map { ($0.build + $0.guarded).map(\.sql.text) } ?? [])
    }

    private var workParts: [String] {
        passes.isEmpty ? statements.map(\.sql.text) : passParts
    }
}
