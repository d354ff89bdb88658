/// How the store's database takes part in replication: publications that include the store's
/// tables, subscriptions writing into them, replication slots and physical standbys. Read by
/// the engine (`ReplicationCatalog`) into the snapshot, so that planning stays pure; `plan`
/// shows it, and each step's `replication…` hazards come from it (`ReplicationHazards`).
public struct ReplicationTopology: Sendable, Hashable, Codable {
    public struct Publication: Sendable, Hashable, Codable {
        public enum Form: String, Sendable, Hashable, Codable {
            case allTables, tablesInSchema, tableList
        }

        public var name: String
        public var form: Form
        /// The store's tables it publishes.
        public var tables: [String]

        public init(name: String, form: Form, tables: [String]) {
            self.name = name
            self.form = form
            self.tables = tables
        }
    }

    public struct Subscription: Sendable, Hashable, Codable {
        public var name: String
        public var isEnabled: Bool
        /// The store's tables it writes into.
        public var tables: [String]
        /// Those of `tables` whose first copy is not done yet, with their state in
        /// `pg_subscription_rel` (`i` waiting, `d` copying, `f` copied, catching up): a step
        /// that changes them now would break the copy (`syncBlockers`).
        public var syncing: [String: String]

        public init(name: String, isEnabled: Bool, tables: [String], syncing: [String: String] = [:]) {
            self.name = name
            self.isEnabled = isEnabled
            self.tables = tables
            self.syncing = syncing
        }
    }

    public struct Slot: Sendable, Hashable, Codable {
        public var name: String
        /// `logical` or `physical`.
        public var kind: String
        public var isActive: Bool
        /// Bytes of WAL between the server's position and the slot's confirmed (logical) or
        /// restart (physical) position.
        public var lagBytes: Int64?

        public init(name: String, kind: String, isActive: Bool, lagBytes: Int64?) {
            self.name = name
            self.kind = kind
            self.isActive = isActive
            self.lagBytes = lagBytes
        }
    }

    /// A physical standby streaming from this server (`pg_stat_replication`).
    public struct Standby: Sendable, Hashable, Codable {
        public var name: String
        public var state: String
        public var replayLagSeconds: Double?

        public init(name: String, state: String, replayLagSeconds: Double?) {
            self.name = name
            self.state = state
            self.replayLagSeconds = replayLagSeconds
        }
    }

    public var publications: [Publication]
    public var subscriptions: [Subscription]
    public var slots: [Slot]
    public var standbys: [Standby]

    public init(publications: [Publication] = [], subscriptions: [Subscription] = [], slots: [Slot] = [], standbys: [Standby] = []) {
        self.publications = publications
        self.subscriptions = subscriptions
        self.slots = slots
        self.standbys = standbys
    }

    public var isEmpty: Bool { publications.isEmpty && subscriptions.isEmpty && slots.isEmpty && standbys.isEmpty }

    /// The store is written by a subscription: its publisher's changes must keep fitting it.
    public var isSubscriptionTarget: Bool { !subscriptions.isEmpty }

    /// A subscription still making its first copy of a table of the store: its table
    /// synchronisation worker copies into the table, and knows it by oid (its record, replication
    /// origin and slot). Migrated now, the copy would fail or come again into tables that hold
    /// the rows already. One blocker per subscription; nothing waits (docs/replication.md).
    public func syncBlockers(store: String) -> [Blocker] {
        subscriptions.filter { !$0.syncing.isEmpty }.map { subscription in
            let tables = subscription.syncing.sorted { $0.key < $1.key }.map { "\(store).\($0.key) (state \($0.value))" }
            return Blocker(
                .subscriptionSyncing,
                "subscription \(subscription.name) has not finished its first copy of \(tables.joined(separator: ", ")): "
                    + "migrating now would break the copy; enable it if it is disabled, wait until pg_subscription_rel shows every table of the store "
                    + "ready (r) or synchronised (s), then run again (docs/replication.md)"
            )
        }
    }

    /// One line per publication, subscription, slot and standby, as `plan` prints them.
    public var lines: [String] {
        var lines = publications.map { publication -> String in
            let form = switch publication.form {
            case .allTables: "FOR ALL TABLES"
            case .tablesInSchema: "FOR TABLES IN SCHEMA"
            case .tableList: "FOR TABLE"
            }
            return "publication \(publication.name) (\(form)): \(publication.tables.joined(separator: ", "))"
        }
        lines += subscriptions.map { subscription in
            let copying = subscription.syncing.isEmpty ? "" : " (first copy not finished: \(subscription.syncing.keys.sorted().joined(separator: ", ")))"
            return "subscription \(subscription.name)\(subscription.isEnabled ? "" : " (disabled)") writes into: \(subscription.tables.joined(separator: ", "))\(copying)"
        }
        lines += slots.map { "\($0.kind) slot \($0.name)\($0.isActive ? "" : " (inactive)"), \($0.lagBytes.map { "\($0) bytes behind" } ?? "lag unknown")" }
        lines += standbys.map { standby in
            "standby \(standby.name) (\(standby.state)), replay lag \(standby.replayLagSeconds.map { "\(($0 * 10).rounded() / 10) s" } ?? "unknown")"
        }
        return lines
    }
}
