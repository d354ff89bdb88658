import Foundation

/// libpq settings a connection gets when neither its connection string nor libpq's environment
/// variables give them.
public struct ConnectionDefaults: Sendable {
    /// `connect_timeout` in seconds (libpq waits forever without one): a server that accepts the
    /// connection and never answers must not hang a command. `PGCONNECT_TIMEOUT` overrides it.
    public var connectTimeoutSeconds: Int?
    /// libpq's `fallback_application_name`, shown in `pg_stat_activity` so that whoever holds a
    /// lock is recognizable. An `application_name` in the string or `PGAPPNAME` wins over it.
    public var applicationName: String?

    /// TCP keepalives and `tcp_user_timeout`: a server whose machine or network went away (no
    /// RST ever comes) is found dead in about a minute instead of the system's two hours.
    public var usesKeepalives: Bool
    /// How long a statement waits before the server's liveness is probed, and between probes:
    /// a server that stops answering mid-statement (paused, frozen) is given up on after two
    /// probes in a row got no answer within `connectTimeoutSeconds` each (LivenessWatch);
    /// nil never probes. `ORCHESTRATOR_LIVENESS_SECONDS` overrides it (0: never).
    public var livenessIntervalSeconds: Double?

    public static let defaultConnectTimeoutSeconds = 10
    public static let defaultLivenessIntervalSeconds = 10.0

    public init(
        connectTimeoutSeconds: Int? = Self.defaultConnectTimeoutSeconds, applicationName: String? = "orchestrator",
        usesKeepalives: Bool = true, livenessIntervalSeconds: Double? = Self.defaultLivenessIntervalSeconds
    ) {
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.applicationName = applicationName
        self.usesKeepalives = usesKeepalives
        self.livenessIntervalSeconds = livenessIntervalSeconds
    }

    /// The liveness watch's settings, or nil when statements are never watched.
    func livenessSettings(environment: [String: String] = ProcessInfo.processInfo.environment) -> LivenessWatch.Settings? {
        let interval = environment["ORCHESTRATOR_LIVENESS_SECONDS"].flatMap(Double.init) ?? livenessIntervalSeconds
        guard let interval, interval > 0 else { return nil }
        return LivenessWatch.Settings(interval: interval, probeTimeout: connectTimeoutSeconds ?? Self.defaultConnectTimeoutSeconds, failuresToGiveUp: 2)
    }

    /// The defaults as libpq options, leaving out those the string or the environment set.
    func options(
        unlessSetIn given: [(keyword: String, value: String)],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [(keyword: String, value: String)] {
        var options: [(keyword: String, value: String)] = []
        let isGiven = { (keyword: String) in given.contains { $0.keyword == keyword && !$0.value.isEmpty } }
        if let connectTimeoutSeconds, !isGiven("connect_timeout"), environment["PGCONNECT_TIMEOUT"]?.isEmpty ?? true {
            options.append(("connect_timeout", String(connectTimeoutSeconds)))
        }
        if let applicationName {
            options.append(("fallback_application_name", applicationName))
        }
        if usesKeepalives {
            let keepalives = [("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"), ("tcp_user_timeout", "60000")]
            options += keepalives.filter { !isGiven($0.0) }
        }
        return options
    }
}
