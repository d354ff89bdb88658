import Foundation
import Planning

/// A plan as `plan --out` writes it, for `apply --plan` to run only when planning again gives
/// exactly the same (docs/workflow.md, "Saved plans"): every statement of every step, and
/// fingerprints of what the plan was computed from — the store's metadata and catalog, the
/// model versions and mapping models on the way, and the options that shape the steps.
public struct SavedPlan: Codable, Sendable, Equatable {
    /// The file format's version; a file of another format is refused, never guessed at.
    public static let currentFormat = 1

    public var format: Int
    public var store: String
    public var model: String
    /// The version the store was at (nil: no store, the plan creates it).
    public var storeVersion: String?
    public var targetVersion: String
    public var fingerprints: Fingerprints
    public var steps: [Step]

    public struct Fingerprints: Codable, Sendable, Equatable {
        /// SHA-256 of the store's row in `orchestrator.stores` (hashes, version, when it was
        /// last written); "none" when there is no store.
        public var storeMetadata: String
        /// SHA-256 of the store schema's tables, columns, constraints and indexes.
        public var storeCatalog: String
        /// Each model version a step starts or ends at: name -> SHA-256 of its full definition.
        public var models: [String: String]
        public var mappingModels: [MappingModel]
        public var options: Options
    }

    public struct MappingModel: Codable, Sendable, Equatable {
        public var source: String
        public var destination: String
        public var file: String
        /// SHA-256 of the file's bytes (of every file inside, for an .xcmappingmodel package).
        public var sha256: String
    }

    /// The choices that shape the steps: `--to`, `--no-backup`, `--streaming`, the custom
    /// policies the running program registered, `--online` (which runs the steps as other
    /// statements, in other transactions) and `--expand` (which also defers the drops and
    /// creates the old version's views).
    public struct Options: Codable, Sendable, Equatable {
        public var targetVersion: String
        public var keepBackup: Bool
        public var streaming: Bool
        public var policies: [String]
        public var online: Bool
        /// Planned for `apply --expand` (then `online` too); written only when set, so a plan
        /// saved without it reads as before.
        public var expand: Bool

        enum CodingKeys: String, CodingKey {
            case targetVersion, keepBackup, streaming, policies, online, expand
        }

        public init(targetVersion: String, keepBackup: Bool, streaming: Bool, policies: [String], online: Bool, expand: Bool = false) {
            self.targetVersion = targetVersion
            self.keepBackup = keepBackup
            self.streaming = streaming
            self.policies = policies
            self.online = online || expand
            self.expand = expand
        }

        /// A plan saved before `online` (or `expand`) was fingerprinted was saved without it.
        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            targetVersion = try container.decode(String.self, forKey: .targetVersion)
            keepBackup = try container.decode(Bool.self, forKey: .keepBackup)
            streaming = try container.decode(Bool.self, forKey: .streaming)
            policies = try container.decode([String].self, forKey: .policies)
            online = try container.decodeIfPresent(Bool.self, forKey: .online) ?? false
            expand = try container.decodeIfPresent(Bool.self, forKey: .expand) ?? false
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(targetVersion, forKey: .targetVersion)
            try container.encode(keepBackup, forKey: .keepBackup)
            try container.encode(streaming, forKey: .streaming)
            try container.encode(policies, forKey: .policies)
            try container.encode(online, forKey: .online)
            if expand { try container.encode(expand, forKey: .expand) }
        }

        /// How `apply` runs the plan, as its flags say it.
        var mode: String { expand ? "apply --expand" : online ? "apply --online" : "apply (neither --online nor --expand)" }
    }

    public struct Step: Codable, Sendable, Equatable {
        public var kind: String
        public var from: String?
        public var to: String
        /// What `apply` runs and history records, in order.
        public var statements: [String]
        /// Heavyweight steps: the lock a second session holds until the swap.
        public var writeGuard: String?
        /// Heavyweight steps: what each streamed pass reads, with its policy.
        public var streamedReads: [String]
        public var hazards: [String]
        /// The step's digest (`PlannedStep.digest`), which its checkpoints also record; absent
        /// from a plan saved by a release before metadata layout 4 (`upgradedFromLayoutThree`).
        public var digest: String? = nil
    }
}

/// A saved plan that cannot be read: the file, and why.
public struct SavedPlanUnreadable: Error, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "cannot use the saved plan \(file): \(reason)" }
}

/// `plan --out FILE` could not write the file: the file, and why.
public struct SavedPlanNotWritten: Error, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "cannot save the plan to \(file): \(reason)" }
}

extension SavedPlan {
    /// The plan's steps as saved: statements as text (a planned statement carries no binds).
    init(plan: MigrationPlan, fingerprints: Fingerprints) {
        format = Self.currentFormat
        store = plan.store
        model = plan.modelName
        storeVersion = plan.storeVersion
        targetVersion = plan.targetVersion
        self.fingerprints = fingerprints
        steps = plan.steps.map { step in
            Step(
                kind: step.kind.rawValue, from: step.from, to: step.to, statements: step.statements.map(\.sql.text),
                writeGuard: step.staged?.writeGuard.sql.text,
                streamedReads: step.passes.compactMap { pass in pass.stream.map { ($0.policy.map { "policy \($0): " } ?? "") + $0.sourceRows.text } },
                hazards: step.hazards.map(\.code), digest: step.digest
            )
        }
    }

    /// Pretty-printed JSON with sorted keys: the same plan gives the same bytes.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        return (try! encoder.encode(self)) + Data("\n".utf8)
    }

    /// Writes the plan to `path`, replacing the file at once (never half written).
    public func write(to path: String) throws {
        do {
            try encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw SavedPlanNotWritten(file: path, reason: error.localizedDescription)
        }
    }

    static func explain(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "no field \(at.isEmpty ? "" : at + ".")\(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "field \(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "field \(path(context)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }
}
