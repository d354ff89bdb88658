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
public struct PlannedStatement: Sendable, Hashable {
    public var sql: SQL
    public var lock: LockLevel
    /// What the statement does, in words: "create table recipe (entity Recipe)".
    public var summary: String

    public init(_ sql: SQL, lock: LockLevel, summary: String) {
        self.sql = sql
        self.lock = lock
        self.summary = summary
    }
}

/// A risk of a step, with a stable code scripts can match on.
public struct Hazard: Sendable, Hashable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

public struct PlannedStep: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case create
        case lightweight
        case heavyweight
    }

    public var kind: Kind
    /// The version the store is at before the step; nil for `create`.
    public var from: String?
    public var to: String
    public var statements: [PlannedStatement]
    public var hazards: [Hazard]
    /// Rows the step reads or writes, as far as the catalog's statistics know.
    public var rowEstimate: Int

    public init(kind: Kind, from: String?, to: String, statements: [PlannedStatement], hazards: [Hazard] = [], rowEstimate: Int = 0) {
        self.kind = kind
        self.from = from
        self.to = to
        self.statements = statements
        self.hazards = hazards
        self.rowEstimate = rowEstimate
    }
}
