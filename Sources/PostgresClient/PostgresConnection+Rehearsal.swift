import SQLBuilding

/// A rehearsal runs work exactly as it would run for real, then undoes all of it: one
/// transaction that is always rolled back, in which every `transaction(_:)` becomes a
/// savepoint (released on success, rolled back to on a thrown error, as a transaction would
/// be). Nothing of it is ever committed.
extension PostgresConnection {
    public var isRehearsing: Bool { rehearsalSavepoints != nil }

    /// Runs `body` inside one transaction and rolls it back, also when `body` returns.
    public func rehearsing<T>(_ body: () throws -> T) throws -> T {
        precondition(!isRehearsing, "rehearsing(_:) called inside a rehearsal on \(self)")
        try execute("BEGIN")
        rehearsalSavepoints = 0
        defer {
            rehearsalSavepoints = nil
            _ = try? execute("ROLLBACK")
        }
        return try body()
    }

    /// `transaction(_:)` inside a rehearsal.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let depth = (rehearsalSavepoints ?? 0) + 1
        rehearsalSavepoints = depth
        defer { rehearsalSavepoints = depth - 1 }
        let name = "orchestrator_rehearsal_\(depth)"
        try execute("SAVEPOINT \(ident: name)")
        do {
            let value = try body()
            try execute("RELEASE SAVEPOINT \(ident: name)")
            return value
        } catch {
            _ = try? execute("ROLLBACK TO SAVEPOINT \(ident: name)")
            _ = try? execute("RELEASE SAVEPOINT \(ident: name)")
            throw error
        }
    }
}
