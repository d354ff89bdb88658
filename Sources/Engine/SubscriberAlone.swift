import Planning

/// A store that subscriptions write into, migrated without its publisher: the publisher's
/// changes would stop fitting it (a column it drops, a table it replaces while the
/// subscription applies). Refused, nothing changed, unless `ApplyOptions.allowSubscriberAlone`;
/// `apply --subscriber` on the publisher migrates both (docs/replication.md).
public struct SubscriberAlone: Error, CustomStringConvertible {
    public var store: String
    public var subscriptions: [String]

    public var description: String {
        "store \(store) is written by subscription \(subscriptions.joined(separator: ", ")): migrated alone, its publisher's changes stop fitting it. "
            + "Nothing was changed: run apply on the publisher with --subscriber <this database's URL>, or pass --allow-subscriber-alone (docs/replication.md)"
    }

    static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard plan.status == .migrationRequired, plan.replication.isSubscriptionTarget, !options.allowSubscriberAlone else { return }
        throw SubscriberAlone(store: plan.store, subscriptions: plan.replication.subscriptions.map(\.name))
    }
}
