import Foundation
import JSONRendering
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What a step leaves in the metadata schema: the store's version and hashes, the version's
/// definition, and a row of history for each step that ran, succeeded or failed.
extension StoreMigrator {
    /// Metadata and history, in the step's transaction.
    func record(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date) throws {
        guard let version = model.version(named: step.to) else {
            preconditionFailure("a planned step targets '\(step.to)', which is not a version of \(model.name)")
        }
        let hashes = VersionHash.hashes(of: version)
        let entityHashes = JSONValue.object(hashes.entities.keys.sorted().map { ($0, .string(hashes.entities[$0]!)) }).rendered
        let identifiers = JSONValue.array(version.versionIdentifiers.map(JSONValue.string)).rendered
        let meta = MetadataSchema.schema
        _ = try connection.execute("""
            INSERT INTO \(ident: meta, "stores") (store, model_name, version_name, model_hash, entity_hashes, version_identifiers)
            VALUES (\(store), \(model.name), \(version.name), \(hashes.model), \(entityHashes)::jsonb, \(identifiers)::jsonb)
            ON CONFLICT (store) DO UPDATE SET model_name = EXCLUDED.model_name, version_name = EXCLUDED.version_name,
                model_hash = EXCLUDED.model_hash, entity_hashes = EXCLUDED.entity_hashes,
                version_identifiers = EXCLUDED.version_identifiers, updated_at = now()
            """)
        _ = try connection.execute("""
            INSERT INTO \(ident: meta, "model_versions") (model_name, version_name, model_hash, entity_hashes, format, definition)
            VALUES (\(model.name), \(version.name), \(hashes.model), \(entityHashes)::jsonb, 'native-json', \(NativeModelWriter.json(of: version)))
            ON CONFLICT (model_name, model_hash) DO NOTHING
            """)
        try insertHistory(step, plan: plan, rows: rows, started: started, outcome: "succeeded", error: nil)
        if step == plan.steps.last { try StoreSchemas.finishChain(store: store, on: connection) }
    }

    func recordFailure(_ step: PlannedStep, plan: MigrationPlan, started: Date, error: Error) throws {
        try insertHistory(step, plan: plan, rows: 0, started: started, outcome: "failed", error: String(describing: error))
    }

    func insertHistory(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date, outcome: String, error: String?) throws {
        let statements = JSONValue.array(step.statements.map { .string($0.sql.text) }).rendered
        let toHash = model.version(named: step.to).map { VersionHash.hashes(of: $0).model } ?? ""
        let fromHash = step.kind == .create ? nil
            : step.from.flatMap { model.version(named: $0) }.map { VersionHash.hashes(of: $0).model } ?? plan.storeModelHash
        let startedText = ISO8601DateFormatter.withFractionalSeconds.string(from: started)
        _ = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, "migrations")
                (store, kind, from_version, to_version, from_hash, to_hash, statements, rows, started_at, finished_at,
                 duration_ms, applied_by, outcome, error)
            VALUES (\(store), \(step.kind.rawValue), \(step.from), \(step.to), \(fromHash), \(toHash), \(statements)::jsonb,
                    \(rows), \(startedText)::timestamptz, clock_timestamp(), \(milliseconds(since: started)),
                    current_user || ' (' || \(Self.operatingSystemUser) || ')', \(outcome), \(error))
            """)
    }

    static var operatingSystemUser: String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
        return "\(user)@\(ProcessInfo.processInfo.hostName)"
    }
}

func milliseconds(since start: Date) -> Int {
    Int((Date().timeIntervalSince(start) * 1000).rounded())
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
