import ArgumentParser
import Engine
import JSONRendering
import ObjectModel
import Planning

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Tell whether the store matches the model's current version, by version hashes."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try model.requireUsable([model.currentVersionName])
            let url = try storeOptions.resolvedDatabaseURL()
            let store = storeOptions.storeName(for: model)
            let connection = try connect(url)
            defer { connection.close() }
            let snapshot = try StoreCatalog.snapshot(store: store, on: connection)
            let recorded = try StoreCatalog.recordedVersions(model: model.name, on: connection)
            let status = StoreStatus(model: model, snapshot: snapshot, recordedVersions: recorded)
            switch formatOptions.format {
            case .json: printLine(status.json.rendered)
            case .text: status.textLines.forEach { printLine($0) }
            }
        }
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
    var currentVersion: String
    var modelHash: String
    var storeModelHash: String?
    var isForeignSchema: Bool

    init(model: VersionedModel, snapshot: StoreSnapshot, recordedVersions: [RecordedVersion]) {
        let current = VersionHash.hashes(of: model.currentVersion).model
        store = snapshot.store
        modelName = model.name
        exists = snapshot.metadata != nil
        isForeignSchema = snapshot.schemaExists && snapshot.metadata == nil
        currentVersion = model.currentVersionName
        modelHash = current
        storeModelHash = snapshot.metadata?.modelHash
        isCompatible = storeModelHash == current
        storeVersionIsRecordedOnly = false
        if let hash = storeModelHash {
            if let version = model.usableVersion(withModelHash: hash).version {
                storeVersion = version.name
            } else if let recorded = recordedVersions.first(where: { $0.modelHash == hash }) {
                storeVersion = recorded.name
                storeVersionIsRecordedOnly = true
            }
        }
    }

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
        ])
    }

    var textLines: [String] {
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
        lines.append(isCompatible ? "compatible: yes" : "compatible: no, migration required (see `orchestrator plan`)")
        return lines
    }
}
