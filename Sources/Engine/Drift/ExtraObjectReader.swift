import Planning
import PostgresClient
import SQLBuilding

/// Reads the store's extra tables and columns (the drift's) with whether each holds anything,
/// for the planner to decide what a step that drops the old store loses.
enum ExtraObjectReader {
    /// 1. Each extra table, and each extra column of a contract table, from the drift.
    /// 2. Whether it holds a row (a value other than NULL): the first one found ends the read.
    ///    A table another session holds locked longer than the drift's lock timeout counts as
    ///    holding rows, so that dropping it still takes consent.
    static func read(_ drift: DriftReport, store: String, on connection: PostgresConnection) throws -> [ExtraObject] {
        var extras: [ExtraObject] = []
        for item in drift.items where item.kind == .extra && (item.object == .table || item.object == .column) {
            let query: SQL = if let column = item.column {
                "SELECT EXISTS (SELECT 1 FROM \(ident: store, item.table) WHERE \(ident: column) IS NOT NULL) AS holds"
            } else {
                "SELECT EXISTS (SELECT 1 FROM \(ident: store, item.table)) AS holds"
            }
            let holdsRows: Bool
            do {
                holdsRows = try connection.transaction {
                    try connection.execute(ExecutionPolicy.setLockTimeout(milliseconds: DriftCheck.lockTimeoutMilliseconds))
                    return try connection.execute(query).bool(0, "holds") != false
                }
            } catch let error as PostgresError where error.sqlState == .lockNotAvailable {
                holdsRows = true
            }
            extras.append(ExtraObject(table: item.table, column: item.column, holdsRows: holdsRows))
        }
        return extras
    }
}
