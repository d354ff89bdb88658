/// Answers a long-lived session keeps so as not to ask the server again for every store it
/// serves (`PostgresConnection.sessionFacts`): only facts that cannot change while the session
/// lasts, or that orchestrator never undoes (a metadata table, once there, stays). Used by one
/// thread at a time, as its connection is.
public final class SessionFacts: @unchecked Sendable {
    private var facts: [String: String] = [:]

    public init() {}

    /// The fact `key`, asking `read` the first time only; a nil answer is not kept.
    public func value(_ key: String, _ read: () throws -> String?) rethrows -> String? {
        if let known = facts[key] { return known }
        let value = try read()
        facts[key] = value
        return value
    }
}
