import SQLBuilding

/// The strongest table lock a statement takes, as PostgreSQL names it.
public enum LockLevel: String, Sendable, Hashable, Codable {
    case none = "none"
    case accessShare = "ACCESS SHARE"
    case rowExclusive = "ROW EXCLUSIVE"
    case shareUpdateExclusive = "SHARE UPDATE EXCLUSIVE"
    case share = "SHARE"
    case shareRowExclusive = "SHARE ROW EXCLUSIVE"
    case accessExclusive = "ACCESS EXCLUSIVE"
}

/// One statement of a step: what it runs, the lock it takes, and why it is there.
///
/// Its text is the whole statement: `plan` prints it, the history records it and the
/// step digest (`PlannedStep.digest`) hashes it, so a value in it is a literal, never a bind.
public struct PlannedStatement: Sendable, Hashable {
    public private(set) var sql: SQL
    public var lock: LockLevel
    /// What the statement does, in words: "create table recipe (entity Recipe)".
    public var summary: String

    /// - Precondition: `sql` has no bound values (write them with the literal helpers).
    public init(_ sql: SQL, lock: LockLevel, summary: String) {
        precondition(sql.binds.isEmpty, "planned statement '\(summary)' has \(sql.binds.count) bound value(s): its text alone must be the statement")
        self.sql = sql
        self.lock = lock
        self.summary = summary
    }
}

/// A risk of a step, with a stable code scripts can match on.
public struct Hazard: Sendable, Hashable {
    public var code: String
    public var message: String
    /// Rows a mapping model leaves behind: the source entity they belong to, and how many.
    public var entity: String?
    public var estimatedRows: RowCount?

    public init(code: String, message: String, entity: String? = nil, estimatedRows: RowCount? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.estimatedRows = estimatedRows
    }
}
