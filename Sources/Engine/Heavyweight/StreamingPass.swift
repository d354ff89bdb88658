import Foundation
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// The streaming path of one entity mapping: rows read through a cursor a batch at a time,
/// computed in Swift (expressions, policy hooks, policy functions) and copied back, so memory
/// holds one batch whatever the store's size.
struct StreamingPass {
    var context: EntityMappingContext
    var policy: (any EntityMigrationPolicy)?
    var sizing: BatchSizing
    /// Asked between two FETCH batches, inside the pass's transaction (`BatchGate`): a pause
    /// waits there, a stop rolls the pass back. Nil: never (a catch-up round, asked after it).
    var gate: BatchGate? = nil
    /// Whether the run holds the write guard: a pause then stops at once, as between passes.
    var holdsWrites = false
    /// Rows done so far, after each batch.
    var onBatch: (Int) -> Void

    static let cursor = "orchestrator_stream"

    /// Stage 1: each associated source row becomes its destination instances; rows a policy
    /// made nothing from lose their association.
    func createInstances() throws -> Int {
        guard let stream = context.stream else { preconditionFailure("stage 1 streams a StreamedMapping") }
        guard policy != nil else { return try copyingRows(stream) }
        let calls = FunctionCalls(policy: policy)
        context.evaluator.callFunction = { call in try calls.call(call) }
        try policy?.begin(context)
        try forEachBatch(stream.sourceRows) { result in
            let reader = SourceRowReader(stream, result)
            for row in result.rows {
                let values = try reader.values(of: row)
                let source = SourceInstance(
                    entity: reader.key(.sourceEntity, of: row) ?? "", primaryKey: Int64(reader.key(.sourceKey, of: row) ?? "") ?? 0,
                    values: values, destinationKey: Int64(reader.key(.destinationKey, of: row) ?? "") ?? 0
                )
                calls.source = source
                context.currentSource = source.primaryKey
                if let policy {
                    try policy.createDestinationInstances(for: source, context)
                } else {
                    try context.createDestinationInstance(for: source)
                }
            }
            try context.writer.flush()
        }
        context.currentSource = nil
        try policy?.endInstanceCreation(context)
        try context.writer.flush()
        if policy != nil { _ = try context.connection.execute(stream.pruneAssociations) }
        return context.writer.written
    }

    /// Stage 1 without a policy: each source row becomes one COPY line of the destination
    /// table, its attributes computed by the expressions (the model's default where there is
    /// none), its to-one links as read; no instance objects in between.
    private func copyingRows(_ stream: StreamedMapping) throws -> Int {
        let entity = try context.writer.columns(of: stream.destinationEntity)
        let expressions = entity.attributes.map { column in stream.attributes.first { $0.name == column.name }?.expression }
        let links = entity.toOnes.map { toOne in stream.links.first { $0.column == toOne.column }?.key }
        let columns = ["_pk", "_entity"] + entity.attributes.map(\.column) + entity.toOnes.map(\.column)
        let copy: SQL = "COPY \(ident: context.stagingSchema, entity.table) (\(idents: columns)) FROM STDIN"
        return try forEachBatch(stream.sourceRows) { result in
            let reader = SourceRowReader(stream, result)
            let linkIndexes = links.map { $0.flatMap { reader.positions[$0] } }
            var lines: [[String?]] = []
            lines.reserveCapacity(result.rows.count)
            for row in result.rows {
                let values = try reader.values(of: row)
                var line: [String?] = [reader.key(.destinationKey, of: row), stream.destinationEntity]
                line.reserveCapacity(columns.count)
                for (attribute, expression) in zip(entity.attributes, expressions) {
                    if let expression {
                        line.append(ValueText.encode(try context.evaluator.evaluate(expression, source: values)))
                    } else {
                        line.append(attribute.defaultText)
                    }
                }
                for index in linkIndexes { line.append(index.flatMap { row[$0] }) }
                lines.append(line)
            }
            try context.connection.copyIn(copy, rows: lines)
        }
    }

    /// Stage 2 with a policy: each destination instance the entity mapping made, read back
    /// with its attributes and to-one keys, goes through `createRelationships`; what it changes
    /// is written back. With `sourceKeys` (a catch-up round): only the instances made from the
    /// source rows it selects.
    func createRelationships(mappingName: String, sourceKeys: SQL? = nil) throws -> Int {
        guard let policy else { return 0 }
        let columns = try context.writer.columns(of: context.destinationEntity)
        let restriction: SQL = sourceKeys.map { keys -> SQL in " AND a.source_pk IN \(keys)" } ?? ""
        let select: SQL = """
            SELECT \(columns.selectList), a.source_pk AS _source_pk
            FROM \(ident: context.stagingSchema, columns.table) AS d
            JOIN \(ident: context.stagingSchema, HeavyweightMigration.associationTable) AS a ON a.destination_pk = d._pk
            WHERE a.entity_mapping = \(literal: mappingName)\(restriction)
            ORDER BY d._pk
            """
        try forEachBatch(select) { result in
            for row in result.rows.indices {
                var values: [String: Value] = [:]
                for attribute in columns.attributes {
                    values[attribute.name] = try ValueText.decode(result.value(row, attribute.name), as: attribute.type!)
                }
                var links: [String: Int64?] = [:]
                for link in columns.toOnes { links[link.name] = .some(result.int(row, link.name)) }
                let instance = DestinationInstance(
                    entity: result.value(row, "_entity") ?? "", primaryKey: result.int(row, "_pk") ?? 0, values: values, links: links
                )
                context.currentSource = result.int(row, "_source_pk")
                try policy.createRelationships(for: instance, context)
                try context.writer.flush()
                try context.writer.update(instance)
            }
        }
        context.currentSource = nil
        try policy.endRelationshipCreation(context)
        try context.writer.flush()
        return 0
    }

    /// Runs `body` on each batch of `select`'s rows, through a cursor of the pass's transaction,
    /// each batch sized by `BatchSizing` (`ApplyOptions.streamingSizing`); returns the rows read.
    /// The cursor keeps the place: a pass commits whole, so there is no key to resume at.
    /// 1. FETCH a batch; none left: done;
    /// 2. `body` computes and writes it, `onBatch` gets the rows so far;
    /// 3. a short batch was the last one; otherwise the hooks are asked (`gate`) before the
    ///    next FETCH, in the transaction: a pause waits with the pass open, a stop (or a wait
    ///    past its timeout) throws `RunStopped`, which rolls the pass back to its last checkpoint.
    @discardableResult
    private func forEachBatch(_ select: SQL, _ body: (QueryResult) throws -> Void) throws -> Int {
        let connection = context.connection
        var sizing = sizing
        var done = 0
        _ = try connection.execute("DECLARE \(ident: Self.cursor) NO SCROLL CURSOR FOR \(select)")
        while true {
            let started = Date()
            let size = sizing.size
            let batch = try connection.execute("FETCH FORWARD \(literal: size) FROM \(ident: Self.cursor)")
            if batch.rows.isEmpty { break }
            try body(batch)
            done += batch.rows.count
            onBatch(done)
            sizing.adapt(rows: batch.rows.count, seconds: Date().timeIntervalSince(started))
            if batch.rows.count < size { break }
            try gate?.pass(BatchPosition(store: context.storeSchema, rowsDone: done, holdsWrites: holdsWrites, isInsidePass: true))
        }
        _ = try connection.execute("CLOSE \(ident: Self.cursor)")
        return done
    }
}

/// Reads the key columns and the source values of a batch's rows by name
/// (`StreamedMapping.KeyColumn`, `StreamedMapping.sourceValues`).
private struct SourceRowReader {
    let positions: [String: Int]
    let keys: [StreamedMapping.KeyColumn: Int]
    let values: [(key: String, type: AttributeType, index: Int)]

    init(_ stream: StreamedMapping, _ batch: QueryResult) {
        let positions = Dictionary(uniqueKeysWithValues: batch.columns.enumerated().map { ($1, $0) })
        self.positions = positions
        keys = Dictionary(uniqueKeysWithValues: StreamedMapping.KeyColumn.allCases.map { column in
            guard let index = positions[column.rawValue] else { preconditionFailure("sourceRows selects \(column.rawValue)") }
            return (column, index)
        })
        values = stream.sourceValues.map { ($0.key, $0.type, positions[$0.key]!) }
    }

    func key(_ column: StreamedMapping.KeyColumn, of row: [String?]) -> String? { row[keys[column]!] }

    func values(of row: [String?]) throws -> [String: Value] {
        var decoded: [String: Value] = [:]
        decoded.reserveCapacity(values.count)
        for value in values {
            decoded[value.key] = try ValueText.decode(row[value.index], as: value.type)
        }
        return decoded
    }
}

/// Calls of `FUNCTION($entityPolicy, …)` for the source instance being migrated.
private final class FunctionCalls: @unchecked Sendable {
    let policy: (any EntityMigrationPolicy)?
    var source: SourceInstance?

    init(policy: (any EntityMigrationPolicy)?) {
        self.policy = policy
    }

    func call(_ call: FunctionCall) throws -> Value {
        guard call.target == .entityPolicy, let policy, let source else {
            throw PolicyError(message: "FUNCTION($\(call.target.rawValue), \"\(call.selector)\", …) has no policy to call")
        }
        return try policy.function(call.selector, arguments: call.arguments, source: source)
    }
}
