import Foundation
import PostgresClient
import SQLBuilding

/// Fresh servers for one test, each in its own container, removed afterwards (even when the
/// body throws): nothing leaks from one test to the next.
public enum Topology {
    /// One server; `settings` as `postgres -c`.
    public static func withServer<T>(settings: [String: String] = [:], _ body: (PostgresContainer) throws -> T) throws -> T {
        let server = try PostgresContainer.launch(role: "server", settings: settings)
        defer { server.remove() }
        return try body(server)
    }

    /// A primary and a streaming standby made from it with `pg_basebackup -R` (hot standby,
    /// read-only): writes on the primary reach the standby.
    public static func withPrimaryAndStandby<T>(_ body: (_ primary: PostgresContainer, _ standby: PostgresContainer) throws -> T) throws -> T {
        let primary = try PostgresContainer.launch(role: "primary")
        defer { primary.remove() }
        // The official image's pg_hba.conf lets replication connections in from the container
        // itself only; the standby comes from another container.
        try primary.shell("echo 'host replication all all scram-sha-256' >> \"$PGDATA/pg_hba.conf\" && pg_ctl reload -D \"$PGDATA\" >/dev/null")
        let primaryAddress = try primary.networkAddress()
        let standby = try PostgresContainer.launch(
            role: "standby",
            command: """
                set -e; rm -rf "$PGDATA"/*; \
                pg_basebackup --host=\(primaryAddress) --port=5432 --username=postgres --pgdata="$PGDATA" --write-recovery-conf \
                    --wal-method=stream --checkpoint=fast --no-sync; \
                chmod 700 "$PGDATA"; exec postgres -c unix_socket_directories=/tmp
                """,
            environment: ["PGPASSWORD": primary.password], password: primary.password
        )
        defer { standby.remove() }
        return try body(primary, standby)
    }

    /// A publisher (`wal_level=logical`) and a subscriber, both empty; the test creates the
    /// publication and the subscription (`subscriptionConnection` is what the subscriber
    /// connects to the publisher with).
    public static func withPublisherAndSubscriber<T>(
        _ body: (_ publisher: PostgresContainer, _ subscriber: PostgresContainer) throws -> T
    ) throws -> T {
        let publisher = try PostgresContainer.launch(role: "publisher", settings: ["wal_level": "logical"])
        defer { publisher.remove() }
        let subscriber = try PostgresContainer.launch(role: "subscriber")
        defer { subscriber.remove() }
        return try body(publisher, subscriber)
    }

    /// The conninfo a server inside the runtime's network uses to reach `server`'s `database`.
    public static func subscriptionConnection(to server: PostgresContainer, database: String = "postgres") throws -> String {
        "host=\(try server.networkAddress()) port=5432 user=postgres password=\(server.password) dbname=\(database)"
    }

    /// Polls `query`'s first value on `url` until it equals `expected` or `timeout` runs out;
    /// returns the last value seen.
    @discardableResult
    public static func waitFor(_ expected: String, query: String, on url: String, timeout: TimeInterval = 60) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var last: String?
        while Date() < deadline {
            if let connection = try? PostgresConnection(url: url) {
                last = try? connection.execute(.init(unsafeRaw: query)).rows.first?.first ?? nil
                connection.close()
                if last == expected { return last }
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return last
    }
}
