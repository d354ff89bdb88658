import SQLBuilding

/// A set-based stage 1 pass whose INSERT may run in parts at once, each on a session of its own
/// (`apply --jobs`): the pass fills its destination table alone (no other entity mapping fills
/// it, none streams, no policy runs in the step), bare (its primary key is built after the
/// rows), with the source rows' own keys (no association rows, no sequence taken), so parts
/// each reading one range of the source table's blocks (a TID range scan: `ctid` between two
/// block numbers) write disjoint rows in any order. Only offline, under the write guard, where
/// the source table cannot change between the parts' reads.
///
/// Each part commits on its own; the pass's transaction then runs the statements after the
/// INSERT (the primary key's build, which sees every part's rows) and records the pass's
/// checkpoint. A run stopped between a part's commit and that checkpoint leaves rows in the
/// table, which no other pass writes: the next run empties it first (`clear`). The plan's
/// statements and its digest are those of the whole pass: a run an earlier release left
/// resumes as before, and how many parts run is the engine's choice.
public struct SplitInsert: Sendable, Hashable {
    /// The staging schema and the table the pass fills.
    public var schema: String
    public var table: String
    /// The store's schema and the source table the INSERT reads (its alias `s`).
    public var sourceSchema: String
    public var sourceTable: String

    /// The split form of `pass`, when it has one: its first statement is the INSERT of
    /// `insertInstances` in its keep-keys form (which ends with its `WHERE` condition), and the
    /// rest build the table's primary key.
    static func of(_ pass: PlannedPass, mapping: ResolvedEntityMapping, loads: StageOneLoads, in schemas: HeavyweightSchemas, among mappings: [ResolvedEntityMapping]) -> SplitInsert? {
        guard pass.stage == .createInstances, pass.execution == .setBased, pass.stream == nil, mapping.keepsSourceKeys,
              loads.bareTables.contains(mapping.destinationTable), loads.keyBuilders[mapping.destinationTable] == mapping.name,
              mappings.filter({ $0.destinationTable == mapping.destinationTable }).count == 1,
              pass.statements.count == 2, pass.statements[0].lock == .rowExclusive else { return nil }
        return SplitInsert(schema: schemas.staging, table: mapping.destinationTable, sourceSchema: schemas.store, sourceTable: mapping.sourceTable)
    }

    /// The source table's size in blocks (`blocks`), read before the parts split it.
    public var blocks: SQL {
        "SELECT pg_relation_size(\(nameLiteral: sourceSchema, sourceTable)) / current_setting('block_size')::bigint AS blocks"
    }

    /// Part `index` of `count` of the pass's INSERT (`statements[0]`): the source rows in that
    /// share of the table's `blocks` blocks, the last part open-ended.
    public func part(_ index: Int, of count: Int, blocks: Int64, insert: PlannedStatement) -> PlannedStatement {
        precondition(count > 1 && (0..<count).contains(index), "part \(index) of \(count) of the INSERT into \(schema).\(table)")
        let first = blocks * Int64(index) / Int64(count), next = blocks * Int64(index + 1) / Int64(count)
        var sql = insert.sql
        if index > 0 { sql.append(" AND s.ctid >= \(literal: "(\(first),0)")::tid") }
        if index < count - 1 { sql.append(" AND s.ctid < \(literal: "(\(next),0)")::tid") }
        return PlannedStatement(sql, lock: insert.lock, summary: insert.summary + " (part \(index + 1) of \(count), by block)")
    }

    /// What a run stopped between its parts' commits and the pass's checkpoint left in the table:
    /// emptied before the parts start, in a transaction of its own (no other session uses the
    /// table then).
    public var clear: PlannedStatement {
        PlannedStatement("TRUNCATE \(ident: schema, table)", lock: .accessExclusive, summary: "empty \(schema).\(table) of the rows an interrupted run's parts left")
    }
}
