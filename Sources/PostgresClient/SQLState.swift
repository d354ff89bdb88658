/// A SQLSTATE code, the five characters PostgreSQL reports with every error, named after
/// PostgreSQL's "Appendix A. Error Codes" as postgres-nio names them: code matches
/// `error.sqlState == .lockNotAvailable`, never `"55P03"`.
public struct SQLState: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The five characters, e.g. `42P01`.
    public var code: String

    public init(_ code: String) {
        self.code = code
    }

    public init(stringLiteral code: String) {
        self.init(code)
    }

    public var description: String { code }

    /// The first two characters: the class (`23`, integrity constraint violation).
    public var errorClass: String { String(code.prefix(2)) }
}

// The codes the orchestrator and its tests react to.
extension SQLState {
    // Class 23: integrity constraint violation.
    public static let notNullViolation: SQLState = "23502"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let uniqueViolation: SQLState = "23505"
    public static let checkViolation: SQLState = "23514"
    // Class 25: invalid transaction state.
    public static let readOnlySQLTransaction: SQLState = "25006"
    public static let idleInTransactionSessionTimeout: SQLState = "25P03"
    // Class 28: invalid authorization specification.
    public static let invalidPassword: SQLState = "28P01"
    // Class 40: transaction rollback.
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"
    // Class 42: syntax error or access rule violation.
    public static let insufficientPrivilege: SQLState = "42501"
    public static let syntaxError: SQLState = "42601"
    public static let undefinedColumn: SQLState = "42703"
    public static let undefinedTable: SQLState = "42P01"
    // Class 55: object not in prerequisite state.
    public static let lockNotAvailable: SQLState = "55P03"
    // Class 57: operator intervention.
    public static let queryCanceled: SQLState = "57014"
}
