import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SavedPlan {
    /// The largest saved plan read: far above any plan `plan --out` writes (the chain through
    /// every version of the corpus's WooCommerce model saves 125 KB), so a bigger file is not
    /// one of them.
    public static let maximumFileBytes = 16 << 20

    /// Reads a plan `plan --out` wrote. Refused, naming the file, with nothing read beyond
    /// what the checks need: a path that is not a regular file (a directory, a FIFO, which is
    /// never waited on, a device), a file over `maximumFileBytes`, one that is not such a plan
    /// or has another format, and one with a key written twice in an object (a reader keeping
    /// the last would see another plan than the one applied).
    public static func read(from path: String) throws -> SavedPlan {
        let data = try boundedContents(of: path)
        if let format = (try? JSONSerialization.jsonObject(with: data)).flatMap({ ($0 as? [String: Any])?["format"] as? Int }),
           format != currentFormat {
            throw SavedPlanUnreadable(file: path, reason: "it has format \(format), and this orchestrator reads format \(currentFormat) (run plan --out again)")
        }
        let plan: SavedPlan
        do {
            plan = try JSONDecoder().decode(SavedPlan.self, from: data)
        } catch let error as DecodingError {
            throw SavedPlanUnreadable(file: path, reason: "it is not a plan written by `orchestrator plan --out` (\(Self.explain(error)))")
        } catch {
            throw SavedPlanUnreadable(file: path, reason: "it is not a plan written by `orchestrator plan --out` (\(error.localizedDescription))")
        }
        if let duplicate = JSONDuplicateKeys.first(in: data) {
            throw SavedPlanUnreadable(
                file: path, reason: "the key '\(duplicate.key)' is written twice in one object (line \(duplicate.line)); `orchestrator plan --out` never does that (run it again)"
            )
        }
        return plan.upgradedFromLayoutThree()
    }

    /// A plan saved by a release before metadata layout 4 (no step digests): its heavyweight
    /// steps made and dropped the staging schema's `_checkpoint` table, whose rows are now in
    /// `orchestrator.checkpoints`; those two statements are read as they are planned now, so
    /// that the plan still applies when nothing else changed.
    func upgradedFromLayoutThree() -> SavedPlan {
        var plan = self
        for index in plan.steps.indices where plan.steps[index].digest == nil && plan.steps[index].kind == "heavyweight" {
            plan.steps[index].statements = plan.steps[index].statements.compactMap { statement in
                let firstLine = statement.prefix { $0 != "\n" }
                if firstLine.hasPrefix("CREATE TABLE "), firstLine.hasSuffix(#"."_checkpoint" ("#) { return nil }
                guard statement.hasPrefix("DROP TABLE "), let range = statement.range(of: #", "[^"]+"\."_checkpoint""#, options: .regularExpression) else {
                    return statement
                }
                return statement.replacingCharacters(in: range, with: "")
            }
        }
        return plan
    }

    /// 1. Open without blocking (a FIFO with no writer would wait for one).
    /// 2. What was opened must be a regular file of at most `maximumFileBytes`.
    /// 3. Read it, stopping past the bound should it grow meanwhile.
    static func boundedContents(of path: String) throws -> Data {
        func refused(_ reason: String) -> SavedPlanUnreadable { SavedPlanUnreadable(file: path, reason: reason) }
        let descriptor = openFile(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw refused("it cannot be read (\(code == EISDIR ? "it is a directory" : String(cString: strerror(code))))")
        }
        defer { closeFile(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw refused("it cannot be read (\(String(cString: strerror(errno))))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw refused("it is a directory, not a file")
        case S_IFIFO: throw refused("it is not a regular file (a FIFO); a saved plan is a file `plan --out` wrote")
        default: throw refused("it is not a regular file (a device or socket); a saved plan is a file `plan --out` wrote")
        }
        let limit = maximumFileBytes
        let tooLarge = "it is larger than \(limit >> 20) MiB, the most a saved plan may hold; `orchestrator plan --out` writes far smaller ones"
        guard Int(info.st_size) <= limit else { throw refused(tooLarge) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while data.count <= limit {
            let count = chunk.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress!, $0.count) }
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw refused("it cannot be read (\(String(cString: strerror(errno))))")
            }
            data.append(contentsOf: chunk[0..<count])
        }
        guard data.count <= limit else { throw refused(tooLarge) }
        return data
    }
}

// At file scope: inside `SavedPlan`, `read` and `open` would name its own members.
private func openFile(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func closeFile(_ descriptor: Int32) { _ = close(descriptor) }

extension SavedPlan {
    /// `plan` as a saved plan, with the fingerprints of what `migrator` computed it from: read
    /// now from the database and the files; `online`: planned for `apply --online`; `expand`:
    /// for `apply --expand`.
    public init(plan: MigrationPlan, migrator: StoreMigrator, online: Bool = false, expand: Bool = false) throws {
        var versions: [String: String] = [:]
        for name in Set(plan.steps.flatMap { [$0.from, $0.to].compactMap { $0 } } + [plan.targetVersion]) {
            guard let version = migrator.model.version(named: name) else { continue }
            versions[name] = VersionHash.digest(of: NativeModelWriter.json(of: version))
        }
        let mappings = try plan.steps.filter { $0.kind == .heavyweight }.compactMap { step in
            try migrator.explicitMappings.first { $0.source == step.from && $0.destination == step.to }.map { mapping in
                MappingModel(source: mapping.source, destination: mapping.destination, file: mapping.file, sha256: try Self.fileDigest(mapping.file))
            }
        }
        let fingerprints = Fingerprints(
            storeMetadata: try Self.storeMetadataDigest(store: plan.store, on: migrator.connection),
            storeCatalog: try Self.catalogDigest(store: plan.store, on: migrator.connection),
            models: versions, mappingModels: mappings,
            options: Options(
                targetVersion: plan.targetVersion, keepBackup: migrator.keepBackup, streaming: migrator.forceStreaming,
                policies: migrator.policies.names.sorted(), online: online, expand: expand
            )
        )
        self.init(plan: plan, fingerprints: fingerprints)
    }

    /// The store's metadata row as text, hashed; "none" without one. `updated_at` is in it, so
    /// a store migrated away and back again does not look unchanged.
    static func storeMetadataDigest(store: String, on connection: PostgresConnection) throws -> String {
        guard try MetadataSchema.exists(on: connection) else { return "none" }
        let row = try connection.execute("""
            SELECT concat_ws(E'\\x01', model_name, version_name, model_hash, entity_hashes::text, version_identifiers::text, updated_at::text) AS row
            FROM \(ident: MetadataSchema.schema, "stores") WHERE store = \(store)
            """)
        return row.isEmpty ? "none" : VersionHash.digest(of: row.value(0, "row") ?? "")
    }

    /// Tables, columns (type, nullability, default), constraints and indexes of the store's
    /// schema, in a fixed order, hashed.
    static func catalogDigest(store: String, on connection: PostgresConnection) throws -> String {
        let result = try connection.execute("""
            SELECT 'column' AS kind, c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') AS item
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = \(store) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT 'constraint', c.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(store)
            UNION ALL
            SELECT 'index', indexdef FROM pg_indexes WHERE schemaname = \(store)
            ORDER BY 1, 2
            """)
        return VersionHash.digest(of: result.rows.map { ($0[0] ?? "") + " " + ($0[1] ?? "") }.joined(separator: "\n"))
    }

    /// SHA-256 of a file, or of every file in a folder (an .xcmappingmodel package) by path.
    static func fileDigest(_ path: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "missing" }
        guard isDirectory.boolValue else {
            return VersionHash.digest(of: try Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString())
        }
        let files = (FileManager.default.subpaths(atPath: path) ?? []).sorted()
        var parts: [String] = []
        for file in files {
            let full = (path as NSString).appendingPathComponent(file)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            parts.append(file + "\u{1}" + (try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()))
        }
        return VersionHash.digest(of: parts.joined(separator: "\u{2}"))
    }
}
