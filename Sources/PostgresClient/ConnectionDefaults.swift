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

    public static let defaultConnectTimeoutSeconds = 10

    public init(connectTimeoutSeconds: Int? = Self.defaultConnectTimeoutSeconds, applicationName: String? = "orchestrator") {
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.applicationName = applicationName
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
        return options
    }
}
