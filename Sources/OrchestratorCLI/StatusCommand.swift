import ArgumentParser
import Engine
import JSONRendering
import ObjectModel
import Planning
import PostgresClient

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Tell whether the store matches the model's current version, by version hashes, and how its tables differ from its version's contract.",
        discussion: """
            With --check the exit code is the answer: 0 the store is at the current version
            and lacks or changed nothing of its contract (extra objects do not count), 2 a
            migration is needed or the store does not exist, 1 an error (also a store that
            differs from its contract, a schema that is not a store, or a store of an unknown
            version or of one known only from the database's record: `plan` and `apply` refuse
            them).
            """
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var lockWaitOptions: LockWaitOptions

    @Flag(name: .long, help: "Exit 0 when the store is up to date without drift, 2 when a migration is needed or the store does not exist, 1 on error.")
    var check = false

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try model.requireUsable([model.currentVersionName])
            let url = try storeOptions.resolvedDatabaseURL()
            let store = storeOptions.storeName(for: model)
            let connection = try connect(url, lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            var status: StoreStatus
            do {
                let snapshot = try StoreCatalog.snapshot(store: store, on: connection)
                let recorded = try StoreCatalog.recordedVersions(model: model.name, on: connection)
                status = StoreStatus(model: model, snapshot: snapshot, recordedVersions: recorded)
                do {
                    status.drift = try DriftCheck.drift(of: snapshot, model: model, on: connection)
                } catch let error as DriftNotReadable {
                    status.driftNotReadable = error
                }
                status.run = try RunningMigration.read(store: store, on: connection)
                status.expansion = try ExpansionRecord.read(store: store, on: connection)
                status.unfinishedExpansion = try UnfinishedExpansion.read(store: store, on: connection)
                status.unfinishedRollsBack = status.unfinishedExpansion.map { run in
                    guard let old = model.version(named: run.from), let new = model.version(named: run.to) else { return false }
                    return UnfinishedExpandRollbackPlan.refusals(from: new, to: old, store: store).isEmpty
                } ?? false
                // Two versions live: the previous version's views are part of the contract.
                // A heavyweight expansion's views serve the new version over the staging tables:
                // the store's tables stay the old version's contract, as they are.
                if let expansion = status.expansion, expansion.inFlight.servesNewVersion(of: store), status.drift != nil {
                    status.drift?.items += try ViewsDrift.drift(of: expansion, model: model, on: connection)
                } else if let expansion = status.expansion, let drift = status.drift {
                    status.drift?.items = ViewsDrift.withoutKeptColumns(
                        drift.items, model: model, from: expansion.oldVersion, to: expansion.newVersion, store: store
                    ) + (try ViewsDrift.drift(of: expansion, model: model, on: connection))
                }
            } catch let error as PostgresError where error.sqlState == .lockNotAvailable {
                throw CouldNotCheck(lockWait: error.lockWait, seconds: lockWaitOptions.lockWait)
            }
            switch formatOptions.format {
            case .json: printLine(status.json.rendered)
            case .text: status.textLines.forEach { printLine($0) }
            }
            if check, let code = status.checkExitCode, code != 0 { throw ExitCode(code) }
        }
    }
}

/// The metadata or the catalog stayed locked longer than `--lock-wait`: exit 1.
struct CouldNotCheck: Error, CustomStringConvertible {
    var lockWait: LockWait?
    var seconds: Double

    var description: String {
        let what = lockWait.map(\.description) ?? "a table it reads is locked by another session"
        return "could not check: \(what), for longer than \(String(format: "%g", seconds)) s (--lock-wait)"
    }
}

/// What `status` reports. A public contract in its JSON form.
struct StoreStatus {
    var store: String
    var modelName: String
    var exists: Bool
    var isCompatible: Bool
    var storeVersion: String?
    var storeVersionIsRecordedOnly: Bool
    /// Compatible, but at another version whose indexes differ (`StoreVersionMatch.indexesDiffer`).
    var indexesDiffer: Bool
    var currentVersion: String
    var modelHash: String
    var storeModelHash: String?
    var isForeignSchema: Bool
    /// Compared with the contract of the store's version; nil when there is no store or its
    /// version is unknown.
    var drift: DriftReport?
    /// The store's tables were locked too long to compare them.
    var driftNotReadable: DriftNotReadable?
    /// The `apply` running on the store now, if any (`orchestrator.runs`).
    var run: RunningMigration?
    /// The previous version served through views (`apply --expand`) until `complete`.
    var expansion: ExpansionRecord?
    /// An `apply --expand` stopped before its switch-over, its views serving the old version.
    var unfinishedExpansion: UnfinishedExpansion?
    /// Whether `rollback --model` undoes it (the step has no change it refuses).
    var unfinishedRollsBack = false

    init(model: VersionedModel, snapshot: StoreSnapshot, recordedVersions: [RecordedVersion]) {
        let current = VersionHash.hashes(of: model.currentVersion).model
        store = snapshot.store
        modelName = model.name
        exists = snapshot.metadata != nil
        isForeignSchema = snapshot.schemaExists && snapshot.metadata == nil
        currentVersion = model.currentVersionName
        modelHash = current
        storeModelHash = snapshot.metadata?.modelHash
        let match = storeModelHash.map {
            StoreVersionMatch(
                storeModelHash: $0, storeVersionName: snapshot.metadata?.versionName, targetModelHash: current, target: model.currentVersion,
                model: model, recordedVersions: recordedVersions
            )
        }
        isCompatible = match?.isCompatible ?? false
        indexesDiffer = match?.indexesDiffer ?? false
        storeVersion = match?.versionName
        storeVersionIsRecordedOnly = match?.isRecordedOnly ?? false
    }

    /// `status --check`: 0 up to date without blocking drift, 2 a migration or a creation is
    /// due, 1 what `plan` would refuse.
    var checkExitCode: Int32? {
        if isForeignSchema || (exists && storeVersion == nil) { return 1 }
        // Migrations start from a version in the files: one known only from the record cannot.
        if storeVersionIsRecordedOnly && !isCompatible { return 1 }
        // A run part-way (`unfinishedExpansion`) differs from its old version's contract by its
        // own changes, and `apply` continues it without checking drift.
        let driftBlocks = unfinishedExpansion == nil && !(drift?.blocking.isEmpty ?? true)
        if driftNotReadable != nil || driftBlocks { return 1 }
        return exists && isCompatible && !indexesDiffer ? 0 : 2
    }

    /// `run` is there only while an `apply` runs, `liveVersions` only while two versions are
    /// live (`apply --expand`), and `unfinishedExpand` only while an `apply --expand` stopped
    /// before its switch-over, so a store at rest prints as it always has.
    var json: JSONValue {
        .object([
            ("store", .string(store)),
            ("model", .string(modelName)),
            ("exists", .bool(exists)),
            ("compatible", .bool(isCompatible)),
            ("storeVersion", storeVersion.map(JSONValue.string) ?? .null),
            ("currentVersion", .string(currentVersion)),
            ("modelHash", .string(modelHash)),
            ("storeModelHash", storeModelHash.map(JSONValue.string) ?? .null),
            ("driftCheckedAgainst", drift.map { .string($0.version) } ?? .null),
            ("drift", .array((drift?.items ?? []).map(\.json))),
        ] + (indexesDiffer ? [("indexesDiffer", .bool(true))] : [])
            + (run.map { [("run", $0.json)] } ?? [])
            + (expansion.map { [("liveVersions", ExpandRendering.liveVersions(store: store, version: storeVersion, expansion: $0))] } ?? [])
            + (unfinishedExpansion.map { [("unfinishedExpand", $0.json(rollsBack: unfinishedRollsBack))] } ?? []))
    }

    var textLines: [String] {
        statusLines + (expansion.map { [ExpandRendering.liveVersionsLine(store: store, version: storeVersion, expansion: $0)] } ?? [])
            + (unfinishedExpansion.map { $0.textLines(rollsBack: unfinishedRollsBack) } ?? [])
            + (run.map { [$0.textLine] } ?? [])
    }

    private var statusLines: [String] {
        guard exists else {
            if isForeignSchema {
                return ["store \(store): schema exists but is not an orchestrator store (no metadata)"]
            }
            return ["store \(store): does not exist; `orchestrator apply` creates it at '\(currentVersion)'"]
        }
        let made = storeVersion.map { "'\($0)'\(storeVersionIsRecordedOnly ? " (known from the database's record of versions)" : "")" }
            ?? "an unknown version"
        var lines = [
            "store \(store): at \(made), model hash \(storeModelHash ?? "")",
            "current version: '\(currentVersion)', model hash \(modelHash)",
        ]
        lines.append(
            !isCompatible ? "compatible: no, migration required (see `orchestrator plan`)"
                : indexesDiffer ? "compatible: yes (same model hash), but its indexes are those of '\(storeVersion ?? "")', not '\(currentVersion)': `orchestrator apply` changes them"
                : "compatible: yes"
        )
        if let driftNotReadable { lines.append("drift: not checked, \(driftNotReadable)") }
        guard let drift else { return lines }
        if drift.items.isEmpty {
            lines.append("drift: none from the contract of '\(drift.version)'")
        } else {
            let blocking = drift.blocking.count
            let verdict = unfinishedExpansion != nil ? "the unfinished run's changes among them; none blocks apply --expand, which continues it"
                : blocking == 0 ? "none blocks plan and apply" : "\(blocking) block\(blocking == 1 ? "s" : "") plan and apply"
            lines.append("drift: \(drift.items.count) difference\(drift.items.count == 1 ? "" : "s") from the contract of '\(drift.version)' (\(verdict))")
            lines += drift.items.map { "  \($0)" }
        }
        return lines
    }
}

extension DriftItem {
    /// One entry of `status`'s `drift` array; a public contract.
    /// `run` is there only while an `apply` runs, so a store at rest prints as it always has.
    var json: JSONValue {
        .object([
            ("kind", .string(kind.rawValue)),
            ("object", .string(object.rawValue)),
            ("table", .string(table)),
            ("column", column.map(JSONValue.string) ?? .null),
            ("name", name.map(JSONValue.string) ?? .null),
            ("expected", expected.map(JSONValue.string) ?? .null),
            ("found", found.map(JSONValue.string) ?? .null),
        ])
    }
}

extension RunningMigration {
    /// `status`'s `run` object; a public contract.
    var json: JSONValue {
        .object([
            ("step", .string(step)),
            ("phase", phase.map(JSONValue.string) ?? .null),
            ("rowsDone", .number(rowsDone)),
            ("state", .string(state.rawValue)),
            ("reason", reason.map(JSONValue.string) ?? .null),
            ("updatedAt", .string(updatedAt)),
            ("pid", .number(pid)),
        ])
    }

    /// `running: step 1 of 1: lightweight 'v1' -> 'v2', backfill item.rating, 5000 rows, paused: … (updated …, pid 123)`.
    var textLine: String {
        let place = [step, phase, rowsDone > 0 ? "\(rowsDone) rows" : nil].compactMap { $0 }.joined(separator: ", ")
        let how = state == .running ? "running" : "\(state.rawValue)\(reason.map { ": " + $0 } ?? "")"
        return "migration running: \(place); \(how) (updated \(updatedAt), pid \(pid))"
    }
}

extension UnfinishedExpansion {
    /// `status`'s `unfinishedExpand` object; a public contract. `versionSchemas` are the
    /// `<store>@<version>` schemas there are; `servedVersions` what each release can use now;
    /// `rollback` whether `rollback --model` undoes it (docs/rolling-deploys-unfinished.md).
    func json(rollsBack: Bool) -> JSONValue {
        .object([
            ("from", .string(from)),
            ("to", .string(to)),
            ("stoppedBeforePhase", .number(nextPhase + 1)),
            ("versionSchemas", .array(versionSchemas.map(JSONValue.string))),
            ("servedVersions", .array([.object([("version", .string(from)), ("schema", .string(viewsSchema))])])),
            ("continueWith", .string(continueCommand)),
            ("rollback", .bool(rollsBack)),
        ])
    }

    var continueCommand: String { "apply --expand --to '\(to)'" }

    func textLines(rollsBack: Bool) -> [String] {
        let others = versionSchemas.filter { $0 != viewsSchema }
        return [
            "expand unfinished: an apply --expand of '\(from)' -> '\(to)' stopped before phase \(nextPhase + 1), before its switch-over",
            "  '\(from)' is served in \"\(viewsSchema)\" (views); '\(to)' is not served yet"
                + (others.isEmpty ? "" : "; other version schemas: \(others.map { "\"\($0)\"" }.joined(separator: ", "))"),
            "  \(continueCommand) continues it" + (rollsBack ? "; rollback --model PATH --store \(store) undoes it" : " (rollback cannot undo its step before the switch-over)"),
        ]
    }
}
