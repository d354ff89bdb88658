import Foundation
import Planning

/// `apply --plan`: planning again under the store's lock gave another plan than the one saved.
/// Nothing was changed.
public struct SavedPlanMismatch: Error, CustomStringConvertible {
    public var file: String
    /// What differs, each naming the store metadata, a model version, a mapping model, an
    /// option or a statement.
    public var differences: [String]

    public var description: String {
        "the plan saved in \(file) is not what apply would run now: \(differences.joined(separator: "; ")); nothing was changed (run plan --out again and review the new plan)"
    }
}

/// The plan `apply --plan FILE` must find again: what was read from the file, and its name.
public struct ExpectedPlan: Sendable {
    public var saved: SavedPlan
    public var file: String

    public init(saved: SavedPlan, file: String) {
        self.saved = saved
        self.file = file
    }

    /// Throws `SavedPlanMismatch` unless `plan`, with what `migrator` computed it from and
    /// whether the apply runs `--online` or `--expand`, is the saved one.
    func requireSame(as plan: MigrationPlan, migrator: StoreMigrator, online: Bool, expand: Bool = false) throws {
        let now = try SavedPlan(plan: plan, migrator: migrator, online: online, expand: expand)
        var differences = saved.differences(from: now)
        if differences.isEmpty { differences = saved.digestDifferences(from: now) }
        if !differences.isEmpty { throw SavedPlanMismatch(file: file, differences: differences) }
    }
}

extension SavedPlan {
    /// What differs from `now`, in words: inputs first (what changed), then the steps and
    /// statements that came out different (what it changes). Empty when identical.
    public func differences(from now: SavedPlan) -> [String] {
        var found: [String] = []
        if store != now.store { found.append("store: saved for \(store), now \(now.store)") }
        if model != now.model { found.append("model: saved for '\(model)', now '\(now.model)'") }
        let before = fingerprints, after = now.fingerprints
        if before.storeMetadata != after.storeMetadata {
            found.append("store metadata: the store was \(Self.describe(storeVersion)) when the plan was saved, and is \(Self.describe(now.storeVersion)) now\(storeVersion == now.storeVersion ? " (migrated or restored since)" : "")")
        }
        if before.storeCatalog != after.storeCatalog {
            found.append("store catalog: the tables, columns, constraints or indexes of schema \(now.store) changed since the plan was saved")
        }
        for name in Set(before.models.keys).union(after.models.keys).sorted() {
            switch (before.models[name], after.models[name]) {
            case let (old?, new?) where old != new: found.append("model version '\(name)' changed")
            case (_?, nil): found.append("model version '\(name)' is no longer on the way")
            case (nil, _?): found.append("model version '\(name)' is now on the way")
            default: break
            }
        }
        found += mappingDifferences(before.mappingModels, after.mappingModels)
        let (old, new) = (before.options, after.options)
        if old.targetVersion != new.targetVersion { found.append("option --to: saved '\(old.targetVersion)', now '\(new.targetVersion)'") }
        if old.keepBackup != new.keepBackup { found.append("option --no-backup: saved \(old.keepBackup ? "off" : "on"), now \(new.keepBackup ? "off" : "on")") }
        if old.streaming != new.streaming { found.append("option --streaming: saved \(old.streaming ? "on" : "off"), now \(new.streaming ? "on" : "off")") }
        if old.expand != new.expand {
            found.append("mode: saved for \(old.mode), now \(new.mode)")
        } else if old.online != new.online {
            found.append("option --online: saved \(old.online ? "on" : "off"), now \(new.online ? "on" : "off")")
        }
        if old.policies != new.policies {
            found.append("registered policies: saved [\(old.policies.joined(separator: ", "))], now [\(new.policies.joined(separator: ", "))]")
        }
        found += stepDifferences(now.steps)
        return found
    }

    /// Steps whose digest (`PlannedStep.digest`) differs from the one saved, when all else is
    /// the same; a plan saved before digests were (`upgradedFromLayoutThree`) has none to
    /// compare. Not for a fleet's cohort plan, whose digests are those of the store it was
    /// planned on.
    func digestDifferences(from now: SavedPlan) -> [String] {
        zip(steps, now.steps).enumerated().compactMap { index, pair in
            guard let saved = pair.0.digest, saved != pair.1.digest else { return nil }
            return "step \(index + 1): its step digest was \(saved), now \(pair.1.digest ?? "none") (the work of its passes or online phases changed)"
        }
    }

    private static func describe(_ version: String?) -> String {
        version.map { "at '\($0)'" } ?? "missing"
    }

    private func mappingDifferences(_ before: [MappingModel], _ after: [MappingModel]) -> [String] {
        var found: [String] = []
        for old in before {
            let name = "mapping model '\(old.source)' -> '\(old.destination)'"
            guard let new = after.first(where: { $0.source == old.source && $0.destination == old.destination }) else {
                found.append("\(name) (\(old.file)) is no longer used")
                continue
            }
            if old.sha256 != new.sha256 { found.append("\(name) (\(new.file)) changed") }
        }
        for new in after where !before.contains(where: { $0.source == new.source && $0.destination == new.destination }) {
            found.append("mapping model '\(new.source)' -> '\(new.destination)' (\(new.file)) is now used")
        }
        return found
    }

    /// Per step, the first thing that differs: its kind or versions, then the first statement.
    private func stepDifferences(_ now: [Step]) -> [String] {
        var found: [String] = []
        if steps.count != now.count { found.append("steps: \(steps.count) saved, \(now.count) now") }
        for (index, (old, new)) in zip(steps, now).enumerated() {
            let name = "step \(index + 1)"
            if (old.kind, old.from, old.to) != (new.kind, new.from, new.to) {
                found.append("\(name): saved \(Self.title(old)), now \(Self.title(new))")
                continue
            }
            if let position = zip(old.statements, new.statements).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                let (saved, planned) = Self.whereTheyDiffer(old.statements[position], new.statements[position])
                found.append("\(name) statement \(position + 1): saved `\(saved)`, now `\(planned)`")
            } else if old.statements.count != new.statements.count {
                found.append("\(name): \(old.statements.count) statements saved, \(new.statements.count) now")
            } else if old.writeGuard != new.writeGuard || old.streamedReads != new.streamedReads {
                found.append("\(name): the write guard or what a streamed pass reads changed")
            } else if old.hazards != new.hazards {
                found.append("\(name) hazards: saved [\(old.hazards.joined(separator: ", "))], now [\(new.hazards.joined(separator: ", "))]")
            }
        }
        return found
    }

    private static func title(_ step: Step) -> String {
        "\(step.kind) \(step.from.map { "'\($0)' -> " } ?? "")'\(step.to)'"
    }

    /// Both statements on one line, each cut to about 100 characters around the first
    /// character where they differ: enough to see the change and find the statement.
    private static func whereTheyDiffer(_ old: String, _ new: String) -> (String, String) {
        func oneLine(_ text: String) -> [Character] {
            Array(text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " "))
        }
        let (a, b) = (oneLine(old), oneLine(new))
        let common = zip(a, b).prefix { $0 == $1 }.count
        let start = max(0, common - 40)
        func excerpt(_ text: [Character]) -> String {
            let end = min(text.count, start + 100)
            return (start > 0 ? "..." : "") + String(text[start..<end]) + (end < text.count ? "..." : "")
        }
        return (excerpt(a), excerpt(b))
    }
}
