import Foundation
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What a policy's hooks get (Core Data's migration manager and entity mapping in one): the
/// entity mapping, ways to create destination instances, and queries against the store being
/// built. Instances created are written in batches; `query` writes the pending ones first.
public final class EntityMappingContext {
    public let name: String
    public let sourceEntity: String
    public let destinationEntity: String
    public let sourceVersion: ModelVersion
    public let destinationVersion: ModelVersion
    /// The old store, read-only while the migration runs.
    public let storeSchema: String
    /// The schema the new store is built in; swapped in at the end.
    public let stagingSchema: String
    /// Set when the hooks run in a catch-up round of `apply --online`, for the source rows it
    /// names; nil in the passes and when the entity mapping runs whole.
    public internal(set) var catchUpRound: CatchUpRoundScope?

    let connection: PostgresConnection
    let stream: StreamedMapping?
    let writer: InstanceWriter
    var evaluator: ExpressionEvaluator
    /// The source row whose hooks run (stage 2: the source of the destination instance), under
    /// which an online step records the instances they insert; nil in the hooks over the whole
    /// entity mapping.
    var currentSource: Int64?

    init(
        stream: StreamedMapping?, entityMapping: String, sourceEntity: String, destinationEntity: String,
        source: ModelVersion, destination: ModelVersion, store: String, staging: String,
        connection: PostgresConnection, now: Date
    ) {
        self.name = entityMapping
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.sourceVersion = source
        self.destinationVersion = destination
        self.storeSchema = store
        self.stagingSchema = staging
        self.connection = connection
        self.stream = stream
        self.writer = InstanceWriter(connection: connection, schema: staging, version: destination)
        self.evaluator = ExpressionEvaluator(now: now)
    }

    /// The destination instance stage 1 associated with `source`, its attributes computed by
    /// the entity mapping's expressions (those without one keep their default).
    @discardableResult
    public func createDestinationInstance(for source: SourceInstance) throws -> DestinationInstance {
        guard let stream else { throw PolicyError(message: "entity mapping \(name): destination instances are created in stage 1 only") }
        var values: [String: Value] = [:]
        for attribute in stream.attributes {
            guard let expression = attribute.expression else { continue }
            values[attribute.name] = try evaluator.evaluate(expression, source: source.values)
        }
        var links: [String: Int64?] = [:]
        if !stream.links.isEmpty {
            let toOnes = try writer.columns(of: stream.destinationEntity).toOnes
            for link in stream.links {
                guard let name = toOnes.first(where: { $0.column == link.column })?.name else { continue }
                if case .int(let key) = source[link.key] { links[name] = .some(key) } else { links[name] = .some(nil) }
            }
        }
        let instance = DestinationInstance(entity: stream.destinationEntity, primaryKey: source.destinationKey, values: values, links: links)
        try writer.insert(instance)
        return instance
    }

    /// A new destination instance of `entity`, associated with no source instance.
    public func insertInstance(of entity: String) throws -> DestinationInstance {
        let instance = DestinationInstance(entity: entity, primaryKey: try writer.newKey(for: entity))
        try writer.recordInserted(instance, by: name, for: currentSource)
        try writer.insert(instance)
        return instance
    }

    /// Runs a statement against the database (the new store is `stagingSchema`), after writing
    /// the instances created so far.
    @discardableResult
    public func query(_ sql: SQL) throws -> QueryResult {
        try writer.flush()
        return try connection.execute(sql)
    }
}

/// Destination instances waiting to be written, copied in batches per entity and set of
/// values; keys for new instances come from the table's sequence, a block at a time.
final class InstanceWriter {
    let connection: PostgresConnection
    let schema: String
    let version: ModelVersion
    private var pending: [DestinationInstance] = []
    private var keys: [String: [Int64]] = [:]
    private var tables: [String: EntityColumns] = [:]
    /// Instances inserted so far.
    private(set) var written = 0
    /// Set while an online step runs (`InstanceWriter+Online`).
    var online: OnlineInstances?
    /// Rows of `_policy_instances` waiting to be written with the instances.
    var insertedBySource: [[String?]] = []

    init(connection: PostgresConnection, schema: String, version: ModelVersion) {
        self.connection = connection
        self.schema = schema
        self.version = version
    }

    func columns(of entity: String) throws -> EntityColumns {
        if let known = tables[entity] { return known }
        guard let columns = EntityColumns(entity: entity, in: version) else {
            throw PolicyError(message: "'\(version.name)' has no entity \(entity)")
        }
        tables[entity] = columns
        return columns
    }

    func newKey(for entity: String) throws -> Int64 {
        let table = try columns(of: entity).table
        if keys[table, default: []].isEmpty {
            let sequence = online?.sequence(of: table) ?? quoteIdentifier(schema) + "." + quoteIdentifier(table)
            let block = try connection.execute(
                "SELECT nextval(pg_get_serial_sequence(\(literal: sequence), '_pk')) AS key FROM generate_series(1, 1000)"
            )
            keys[table] = block.rows.compactMap { $0[0].flatMap { Int64($0) } }.reversed()
            if let last = keys[table]?.first { try keepStagingSequence(of: table, past: last) }
        }
        return keys[table]!.removeLast()
    }

    func insert(_ instance: DestinationInstance) throws {
        pending.append(instance)
        if pending.count >= 10_000 { try flush() }
    }

    /// Copies the pending instances, one COPY per entity over all its columns: an attribute
    /// nothing set gets the model's default, as the column's DEFAULT would give it.
    func flush() throws {
        guard !pending.isEmpty else { return }
        var groups: [String: [DestinationInstance]] = [:]
        var order: [String] = []
        for instance in pending {
            if groups[instance.entity] == nil { order.append(instance.entity) }
            groups[instance.entity, default: []].append(instance)
        }
        for name in order {
            let instances = groups[name]!
            let entity = try columns(of: name)
            // Names a policy set (those from the mapping's expressions come from the model).
            for instance in instances where !instance.changed.isEmpty {
                try entity.checkNames(of: instance)
            }
            let columns = ["_pk", "_entity"] + entity.attributes.map(\.column) + entity.toOnes.map(\.column)
            let rows = instances.lazy.map { instance -> [String?] in
                var row: [String?] = [String(instance.primaryKey), instance.entity]
                row.reserveCapacity(columns.count)
                for attribute in entity.attributes {
                    if let value = instance.values[attribute.name] {
                        row.append(ValueText.encode(value))
                    } else {
                        row.append(attribute.defaultText)
                    }
                }
                for link in entity.toOnes {
                    row.append(instance.relationship(link.name).map(String.init))
                }
                return row
            }
            try connection.copyIn("COPY \(ident: schema, entity.table) (\(idents: columns)) FROM STDIN", rows: rows)
            for instance in instances { instance.markWritten() }
            written += instances.count
        }
        pending.removeAll(keepingCapacity: true)
        try flushInsertedBySource()
    }

    /// Writes what hooks changed in instances read back from the store.
    func update(_ instance: DestinationInstance) throws {
        guard !instance.changed.isEmpty else { return }
        let entity = try columns(of: instance.entity)
        var assignments: [SQL] = []
        for name in instance.changed.sorted() {
            if let attribute = entity.attributes.first(where: { $0.name == name }) {
                assignments.append("\(ident: attribute.column) = \(ValueText.encode(instance[name]))")
            } else if let link = entity.toOnes.first(where: { $0.name == name }) {
                assignments.append("\(ident: link.column) = \(instance.relationship(name).map(SQLValue.int) ?? .null)")
            } else {
                throw PolicyError(message: "\(entity.entity) has no stored attribute or to-one relationship '\(name)'")
            }
        }
        _ = try connection.execute("""
            UPDATE \(ident: schema, entity.table) SET \(SQL.joined(assignments, separator: ", ")) WHERE _pk = \(instance.primaryKey)
            """)
        instance.markWritten()
    }
}

/// An entity's columns in its hierarchy's table: stored attributes and to-one relationships
/// kept in a column.
struct EntityColumns {
    struct Column {
        var name: String
        var column: String
        var type: AttributeType?
        /// The model's default, as COPY text; nil for none.
        var defaultText: String? = nil
    }

    var entity: String
    var table: String
    var attributes: [Column]
    var toOnes: [Column]
    private var attributeNames: Set<String> = []
    private var toOneNames: Set<String> = []

    init?(entity name: String, in version: ModelVersion) {
        guard let entity = version.entity(named: name) else { return nil }
        self.entity = name
        table = StoreNaming.tableName(entity: version.root(of: entity).name)
        let columns = version.propertyColumns
        attributes = version.allAttributes(of: entity).filter { !$0.isTransient }.map { attribute in
            let value = attribute.defaultValue.flatMap { DefaultValue.parse($0, as: attribute.type) }
            return Column(name: attribute.name, column: columns.column(ofProperty: attribute.name, of: entity, in: version)!, type: attribute.type, defaultText: value.map(Self.text))
        }
        toOnes = version.allRelationships(of: entity).filter { relationship in
            let declaring = version.ancestry(of: entity).last { $0.relationships.contains(relationship) } ?? entity
            return StoreLayout.storage(of: relationship, in: declaring, version: version) == .column
        }.map { Column(name: $0.name, column: columns.column(ofProperty: $0.name, of: entity, in: version)!, type: nil) }
        attributeNames = Set(attributes.map(\.name))
        toOneNames = Set(toOnes.map(\.name))
    }

    static func text(_ value: DefaultValue) -> String {
        switch value {
        case .integer(let i): String(i)
        case .decimal(let text): text
        case .double(let d): ValueText.encode(.double(d)) ?? ""
        case .string(let s): s
        case .boolean(let b): b ? "t" : "f"
        case .date(let date): ValueText.timestamp(date)
        case .uuid(let uuid): uuid.uuidString.lowercased()
        }
    }

    /// Every attribute and to-one relationship a policy set on an instance is one of the entity's.
    func checkNames(of instance: DestinationInstance) throws {
        for name in instance.changed where !attributeNames.contains(name) && !toOneNames.contains(name) {
            let what = instance.links[name] != nil ? "to-one relationship '\(name)' stored in its table" : "stored attribute '\(name)'"
            throw PolicyError(message: "\(entity) has no \(what)")
        }
    }

    /// `_pk`, `_entity`, the attributes (dates as epoch seconds) and the to-one columns of
    /// rows aliased `d`.
    var selectList: SQL {
        let values: [SQL] = attributes.map { column in
            column.type == .date
                ? "extract(epoch from d.\(ident: column.column))::text AS \(ident: column.name)"
                : "d.\(ident: column.column) AS \(ident: column.name)"
        } + toOnes.map { "d.\(ident: $0.column) AS \(ident: $0.name)" }
        return SQL.joined(["d._pk", "d._entity"] + values, separator: ", ")
    }
}
