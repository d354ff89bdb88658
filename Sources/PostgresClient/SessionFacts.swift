/// Answers a long-lived session keeps so as not to ask the server again for every store it
/// serves (`PostgresConnection.sessionFacts`): only facts that cannot change while the session
/// lasts, or that orchestrator never undoes (a metadata table, once there, stays). Used by one
/// thread at a time, as its connection is.
/// A plan's own facts (`keepsAbsence`) keep a nil answer too: nothing is created while it
/// plans, and it is dropped with the plan.
public final class SessionFacts: @unchecked Sendable {
    private var facts: [String: String?] = [:]
    public let keepsAbsence: Bool

    public init(keepsAbsence: Bool = false) {
        self.keepsAbsence = keepsAbsence
    }

    /// The fact `key`, asking `read` the first time only; a nil answer is kept only with
    /// `keepsAbsence`.
    public func value(_ key: String, _ read: () throws -> String?) rethrows -> String? {
        if let known = facts[key] { return known }
        let value = try read()
        if value != nil || keepsAbsence { facts[key] = .some(value) }
        return value
    }
}
