import Foundation
import PostgresClient
import SQLBuilding

/// The PostgreSQL server integration tests run against, named by the `DATABASE_URL` environment
/// variable (a URL or conninfo string for a role that may create and drop databases).
public enum TestDatabase {
    /// The admin connection string, or nil when `DATABASE_URL` is unset or empty.
    public static var adminURL: String? {
        guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// Whether a server is configured.
    public static var isAvailable: Bool { adminURL != nil }

    /// Whether integration tests must run (under CI), so a missing server fails them instead of
    /// skipping them.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Creates a database with a random name, passes `body` a connection string for it, and drops
    /// it afterwards (with `FORCE`, so connections `body` left open do not block the drop) even if
    /// `body` throws.
    public static func withFreshDatabase<T>(_ body: (_ url: String) throws -> T) throws -> T {
        guard let adminURL else { throw TestDatabaseError.missingURL }
        let name = "orchestrator_test_" + randomHex(byteCount: 8)
        let admin = try PostgresConnection(url: adminURL)
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(ident: name)")
        let outcome = Result { try body(connectionString(adminURL, database: name)) }
        do {
            try admin.execute("DROP DATABASE IF EXISTS \(ident: name) WITH (FORCE)")
        } catch {
            // Report a failed drop only when it is the sole failure; the body's error matters more.
            if case .success = outcome { throw error }
        }
        return try outcome.get()
    }

    /// `withFreshDatabase` with a connection to the new database, closed afterwards.
    public static func withFreshConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            return try body(connection)
        }
    }

    /// `base` pointed at another database: the URL path is replaced, or for conninfo a `dbname`
    /// is appended (libpq lets a later keyword override an earlier one).
    public static func connectionString(_ base: String, database: String) -> String {
        guard let afterScheme = urlAuthorityStart(base) else {
            return base + " dbname=" + quotedConninfoValue(database)
        }
        let path = "/" + percentEncoded(database)
        // libpq's userinfo cannot hold an unencoded `/`, so the first `/` starts the path.
        if let slash = base[afterScheme...].firstIndex(of: "/") {
            let queryStart = base[slash...].firstIndex(of: "?") ?? base.endIndex
            return String(base[..<slash]) + path + String(base[queryStart...])
        }
        let hostStart = base[afterScheme...].lastIndex(of: "@").map(base.index(after:)) ?? afterScheme
        let queryStart = base[hostStart...].firstIndex(of: "?") ?? base.endIndex
        return String(base[..<queryStart]) + path + String(base[queryStart...])
    }

    /// `base` with other credentials: the URL's userinfo is replaced, or for conninfo `user` and
    /// `password` are appended.
    public static func connectionString(_ base: String, user: String, password: String) -> String {
        guard let afterScheme = urlAuthorityStart(base) else {
            return base + " user=" + quotedConninfoValue(user) + " password=" + quotedConninfoValue(password)
        }
        let pathStart = base[afterScheme...].firstIndex(of: "/") ?? base.endIndex
        let hostStart = base[afterScheme..<pathStart].lastIndex(of: "@").map(base.index(after:)) ?? afterScheme
        let userinfo = percentEncoded(user) + ":" + percentEncoded(password) + "@"
        return String(base[..<afterScheme]) + userinfo + String(base[hostStart...])
    }

    private static func urlAuthorityStart(_ connectionString: String) -> String.Index? {
        guard connectionString.hasPrefix("postgres://") || connectionString.hasPrefix("postgresql://") else {
            return nil
        }
        return connectionString.range(of: "://")?.upperBound
    }

    private static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    private static func quotedConninfoValue(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private static func randomHex(byteCount: Int) -> String {
        (0..<byteCount).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}

public enum TestDatabaseError: Error, CustomStringConvertible {
    case missingURL

    public var description: String {
        switch self {
        case .missingURL:
            return "DATABASE_URL is not set: integration tests need a PostgreSQL server (run `make test`)"
        }
    }
}
