import SQLBuilding

/// A set-based stage 1 pass whose INSERT may run in parts at once, each on a session of its own
/// (`apply --jobs`): the pass fills its destination table alone (no other entity mapping fills
/// it, none streams, no policy runs in the step), bare (its primary key is built after the
/// rows), with the source rows' own keys (no association rows, no sequence taken), so parts
/// split by source key (`_pk % count`) write disjoint rows in any order.
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

    /// The split form of `pass`, when it has one: its first statement is the INSERT of
    /// `insertInstances` in its keep-keys form (which ends with its `WHERE` condition), and the
    /// rest build the table's primary key.
    static func of(_ pass: PlannedPass, mapping: ResolvedEntityMapping, loads: StageOneLoads, in schemas: HeavyweightSchemas, among mappings: [ResolvedEntityMapping]) -> SplitInsert? {
        guard pass.stage == .createInstances, pass.execution == .setBased, pass.stream == nil, mapping.keepsSourceKeys,
              loads.bareTables.contains(mapping.destinationTable), loads.keyBuilders[mapping.destinationTable] == mapping.name,
              mappings.filter({ $0.destinationTable == mapping.destinationTable }).count == 1,
              pass.statements.count == 2, pass.statements[0].lock == .rowExclusive else { return nil }
        return SplitInsert(schema: schemas.staging, table: mapping.destinationTable)
    }

    /// Part `index` of `count` of the pass's INSERT (`statements[0]`): the source rows whose key
    /// leaves that remainder.
    public func part(_ index: Int, of count: Int, insert: PlannedStatement) -> PlannedStatement {
        precondition(count > 1 && (0..<count).contains(index), "part \(index) of \(count) of the INSERT into \(schema).\(table)")
        var sql = insert.sql
        sql.append(" AND s._pk % \(literal: count) = \(literal: index)")
        return PlannedStatement(sql, lock: insert.lock, summary: insert.summary + " (part \(index + 1) of \(count), by key)")
    }

    /// What a run stopped between its parts' commits and the pass's checkpoint left in the table:
    /// emptied before the parts start, in a transaction of its own (no other session uses the
    /// table then).
    public var clear: PlannedStatement {
        PlannedStatement("TRUNCATE \(ident: schema, table)", lock: .accessExclusive, summary: "empty \(schema).\(table) of the rows an interrupted run's parts left")
    }
}
