import Planning

/// A loss `rollback` found, with the rows it counted in the store.
public struct CountedLoss: Sendable, CustomStringConvertible {
    public var loss: RollbackLoss
    public var rows: Int

    public var description: String { "\(loss.message): \(rows) row\(rows == 1 ? "" : "s")" }
}

/// What `rollback` did, or would do (`isDryRun`).
public struct RollbackReport: Sendable {
    public var store: String
    /// The version the store leaves, and the one it returns to.
    public var fromVersion: String
    public var version: String
    public var viewsSchema: String
    public var isDryRun: Bool
    /// The views' drop, then the step back, in order.
    public var statements: [String]
    public var losses: [CountedLoss]
    /// Sessions `--force` ended.
    public var endedSessions: [OldVersionSession]
    public var durationMilliseconds: Int
}

/// `rollback` found nothing to roll back.
public struct NothingToRollBack: Error, CustomStringConvertible {
    public var store: String

    public var description: String {
        "store \(store) serves one version only: nothing to roll back (rollback undoes an apply --expand before complete)"
    }
}

/// `rollback` refused: sessions hold locks on the store's tables or the old version's views;
/// nothing was changed.
public struct StoreInUseForRollback: Error, CustomStringConvertible {
    public var store: String
    public var sessions: [OldVersionSession]

    public var description: String {
        "store \(store): \(sessions.count) session\(sessions.count == 1 ? "" : "s") still use\(sessions.count == 1 ? "s" : "") its tables or views: "
            + sessions.map(\.description).joined(separator: "; ")
            + "; nothing was changed (stop the new release first, or run rollback --force to end these sessions)"
    }
}
