import Foundation
import PostgresClient

extension FleetRun {
    /// A store whose server names subscribers for it (`servers[].subscribers`): migrated with
    /// them as `apply --subscriber` migrates one (`ReplicatedApply`): additive changes reach the
    /// subscribers' stores in the order that keeps replication flowing, and what the publisher
    /// writes meanwhile arrives. Each subscriber's connections are kept as a server's are. With
    /// `--plan`, the store's plan is compared with its cohort's before the publisher's lock is
    /// taken (`ReplicatedApply` plans again under it).
    func applyReplicated(
        _ migrator: StoreMigrator, server: FleetServer, subscribers: [FleetSubscriber], cohortPlan: CohortPlan?
    ) throws -> (report: ApplyReport, changed: Bool) {
        var taken: [(connection: PostgresConnection, server: FleetServer)] = []
        var healthy = true
        defer {
            for (connection, server) in taken {
                if healthy { connections.give(connection, of: server) } else { connections.giveIfHealthy(connection, of: server) }
            }
        }
        var theirs: [ReplicatedApply.Subscriber] = []
        for subscriber in subscribers {
            let target = Self.connectionTarget(of: subscriber, server: server)
            let connection: PostgresConnection
            do {
                connection = try connections.take(target)
            } catch {
                throw FleetSubscriberUnreachable(subscriber: subscriber.name, server: server.name, underlying: error)
            }
            taken.append((connection, target))
            var migrator = migrator
            migrator.connection = connection
            migrator.contracts = connections.contracts(of: target.name)
            theirs.append(ReplicatedApply.Subscriber(name: subscriber.name, migrator: migrator))
        }
        do {
            if let cohortPlan { try cohortPlan.requireSame(as: try migrator.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver), migrator: migrator, online: options.online, expand: options.expand) }
            var replicated = ReplicatedApply(publisher: migrator, subscribers: theirs)
            if let seconds = server.subscriberWait { replicated.waitSeconds = seconds }
            replicated.waitSetting = "subscriberWait of server \(server.name) in \((fleet.path as NSString).lastPathComponent)"
            let reports = try replicated.apply(options: options)
            let changed = !([reports.publisher] + reports.subscribers).allSatisfy(\.appliedSteps.isEmpty)
            return (reports.publisher, changed)
        } catch {
            healthy = false
            throw error
        }
    }

    /// A subscriber's connections are kept apart from every server's (and from another
    /// server's subscriber of the same name).
    static func connectionTarget(of subscriber: FleetSubscriber, server: FleetServer) -> FleetServer {
        FleetServer(name: "\(server.name)/subscribers/\(subscriber.name)", url: subscriber.url)
    }
}

/// A subscriber named in the fleet file for a store could not be reached: the store is
/// `failed`, with nothing changed on any side.
public struct FleetSubscriberUnreachable: Error, CustomStringConvertible {
    public var subscriber: String
    public var server: String
    public var underlying: Error

    public var description: String {
        "subscriber \(subscriber) of server \(server) could not be reached: \(underlying); nothing was changed"
    }
}
