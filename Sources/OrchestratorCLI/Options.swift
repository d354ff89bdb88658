import ArgumentParser
import Engine
import Foundation
import Mapping
import ObjectModel
import Planning
import PostgresClient

public enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text
    case json
}

struct ModelOptions: ParsableArguments {
    @Option(name: .long, help: "A versioned-model folder (with model.yaml) or an .xcdatamodeld package.")
    var model: String

    /// Every command reads a model, so `--verbose` and `--quiet` come with this group.
    @OptionGroup var outputOptions: OutputOptions

    /// Every version read, none validated yet; one that cannot be read is set aside with its
    /// problems, and stops the command only when the command needs it (`requireUsable`).
    func loadEachVersion() throws -> VersionedModel {
        try ModelLoader.loadEachVersion(path: model)
    }

    /// A version named on the command line must exist: a usage error otherwise.
    func checkVersion(_ name: String?, in model: VersionedModel) throws {
        guard let name, !model.versionNames.contains(name) else { return }
        throw ValidationError("no version named '\(name)' in \(model.path) (versions: \(model.versionNames.joined(separator: ", ")))")
    }
}

struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The store's schema (default: the model's name in snake_case).")
    var store: String?

    @Option(name: .long, help: "PostgreSQL URL or conninfo (default: $DATABASE_URL, else libpq's PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGSSLMODE and .pgpass). Passwords are never printed.")
    var databaseURL: String?

    func storeName(for model: VersionedModel) -> String {
        store ?? StoreNaming.snakeCase(model.name)
    }

    /// `--database-url`, else `DATABASE_URL`, else the empty string: libpq then connects as
    /// psql would, from PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGSSLMODE and `.pgpass`.
    func resolvedDatabaseURL() throws -> String {
        if let databaseURL, !databaseURL.isEmpty { return databaseURL }
        return ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
    }

    func validate() throws {
        if let store, store.isEmpty || store.utf8.count > StoreNaming.maximumIdentifierBytes {
            throw ValidationError("--store must be a schema name of 1 to 63 bytes")
        }
        // Printed in every output line, a newline would forge lines of its own.
        if let store, let control = store.unicodeScalars.first(where: { [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) }) {
            throw ValidationError("--store must not contain control characters (it holds U+\(String(format: "%04X", control.value))); a schema name is printed in every line of output")
        }
        if store == "orchestrator" || store?.hasPrefix("pg_") == true || store == "information_schema" {
            throw ValidationError("--store '\(store!)' is reserved")
        }
    }
}

struct FormatOptions: ParsableArguments {
    @Option(name: .long, help: "Output format: text or json.")
    var format: OutputFormat = .text
}

struct MappingOptions: ParsableArguments {
    @Option(name: .long, help: "A folder of mapping models (*.yaml, *.yml, *.json, *.xcmappingmodel); repeatable. Default: beside the model.")
    var mappings: [String] = []

    /// Mapping models in the folders given, or beside the model (docs/mapping-format.md, "Where
    /// mapping models are found"), with the files passed over.
    func find(for model: VersionedModel) throws -> FoundMappingModels {
        mappings.isEmpty ? try MappingModelFinder.find(beside: model) : try MappingModelFinder.find(inDirectories: mappings)
    }

    /// The mapping models `plan` and `apply` follow; the files passed over are printed as
    /// warnings, and a mapping model naming a version the model does not have stops the command.
    func explicitMappings(for model: VersionedModel) throws -> [ExplicitMapping] {
        let found = try find(for: model)
        for warning in found.warnings { printWarning(warning.description) }
        let issues = found.mappingModels.flatMap { MappingModelValidator.versionIssues($0, model: model) }
        if !issues.isEmpty { throw MappingLoadError(issues) }
        return found.mappingModels.map { ExplicitMapping($0) }
    }
}

/// How heavyweight steps run: shared by `plan` (which shows it) and `apply`.
struct HeavyweightOptions: ParsableArguments {
    @Flag(name: .long, help: "Drop the old store after a heavyweight step instead of keeping it as <store>~.")
    var noBackup = false

    @Flag(name: .long, help: "Run every entity mapping of a heavyweight step through the streaming path (Swift), as one with a custom policy runs.")
    var streaming = false
}

/// What `plan` and `apply` share beyond the model and the store: the mapping models they
/// follow, how heavyweight steps run, and the migrator both start from.
struct MigrationOptions: ParsableArguments {
    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var heavyweightOptions: HeavyweightOptions

    /// Every version read, `target` checked and usable, the mapping models found and checked;
    /// then a migrator for the store, with these choices and the policies the program
    /// registered, over a connection that closes when `body` returns.
    func withMigrator<Result>(
        model modelOptions: ModelOptions, store storeOptions: StoreOptions, target: String?, lockWait: Double,
        _ body: (VersionedModel, StoreMigrator) throws -> Result
    ) throws -> Result {
        let model = try modelOptions.loadEachVersion()
        try modelOptions.checkVersion(target, in: model)
        try model.requireUsable([target ?? model.currentVersionName])
        let explicitMappings = try mappingOptions.explicitMappings(for: model)
        let url = try storeOptions.resolvedDatabaseURL()
        let connection = try connect(url, lockWait: lockWait)
        defer { connection.close() }
        var migrator = StoreMigrator(
            connection: connection, model: model, store: storeOptions.storeName(for: model), targetVersion: target, explicitMappings: explicitMappings
        )
        migrator.keepBackup = !heavyweightOptions.noBackup
        migrator.forceStreaming = heavyweightOptions.streaming
        return try body(model, migrator)
    }
}
