import Foundation
import JSONRendering
import ObjectModel
import Planning
import SQLBuilding

/// The metadata and history a step writes, as SQL values: `apply` runs them with its
/// values bound, `plan --format sql` prints them with the values inlined (`SQLScript`), so
/// both leave the same rows.
struct StepRecord {
    var store: String
    var model: VersionedModel
    var step: PlannedStep
    var plan: MigrationPlan

    /// The store's row in `orchestrator.stores` and the version's in `model_versions`.
    func metadata() -> [SQL] {
        guard let version = model.version(named: step.to) else {
            preconditionFailure("a planned step targets '\(step.to)', which is not a version of \(model.name)")
        }
        return Self.metadata(store: store, modelName: model.name, version: version)
    }

    /// The same for a store that is now at `version` without a step (`restore`, `adopt`).
    static func metadata(store: String, modelName: String, version: ModelVersion) -> [SQL] {
        let hashes = VersionHash.hashes(of: version)
        let entityHashes = JSONValue.object(hashes.entities.keys.sorted().map { ($0, .string(hashes.entities[$0]!)) }).rendered
        let identifiers = JSONValue.array(version.versionIdentifiers.map(JSONValue.string)).rendered
        let meta = MetadataSchema.schema
        return [
            """
            INSERT INTO \(ident: meta, "stores") (store, model_name, version_name, model_hash, entity_hashes, version_identifiers)
            VALUES (\(store), \(modelName), \(version.name), \(hashes.model), \(entityHashes)::jsonb, \(identifiers)::jsonb)
            ON CONFLICT (store) DO UPDATE SET model_name = EXCLUDED.model_name, version_name = EXCLUDED.version_name,
                model_hash = EXCLUDED.model_hash, entity_hashes = EXCLUDED.entity_hashes,
                version_identifiers = EXCLUDED.version_identifiers, updated_at = now()
            """,
            """
            INSERT INTO \(ident: meta, "model_versions") (model_name, version_name, model_hash, entity_hashes, format, definition)
            VALUES (\(modelName), \(version.name), \(hashes.model), \(entityHashes)::jsonb, 'native-json', \(NativeModelWriter.json(of: version)))
            ON CONFLICT (model_name, model_hash) DO NOTHING
            """,
        ]
    }

    /// The history row. What only the run knows comes as fragments: the rows, when it
    /// started, how long it took and who ran it.
    func history(rows: SQL, startedAt: SQL, durationMilliseconds: SQL, appliedBy: SQL, outcome: String, error: String?) -> SQL {
        let statements = JSONValue.array(step.statements.map { .string($0.sql.text) }).rendered
        let toHash = model.version(named: step.to).map { VersionHash.hashes(of: $0).model } ?? ""
        let fromHash = step.kind == .create ? nil
            : step.from.flatMap { model.version(named: $0) }.map { VersionHash.hashes(of: $0).model } ?? plan.storeModelHash
        return """
            INSERT INTO \(ident: MetadataSchema.schema, "migrations")
                (store, kind, from_version, to_version, from_hash, to_hash, statements, rows, started_at, finished_at,
                 duration_ms, applied_by, outcome, error)
            VALUES (\(store), \(step.phases?.expansion == nil ? step.kind.rawValue : "expand"), \(step.from), \(step.to), \(fromHash), \(toHash), \(statements)::jsonb,
                    \(rows), \(startedAt), clock_timestamp(), \(durationMilliseconds),
                    \(appliedBy), \(outcome), \(error))
            """
    }
}
