import Foundation
import PostgresClient
import SQLBuilding

/// A fleet run as the journal (schema `orchestrator_fleet`) records it: the run, its waves,
/// and each store's outcome. A worker claims a store by locking its row (`FOR UPDATE SKIP
/// LOCKED`) in a transaction it keeps open while it migrates the store, and commits the
/// outcome in it: a claim lasts as long as the worker's session, so a worker that dies gives
/// its stores back, and any worker takes them.
public struct FleetJournal {
    public static let schema = "orchestrator_fleet"
    /// The outcomes of stores that reached the target.
    static let done: [String] = [FleetOutcome.Kind.migrated.rawValue, FleetOutcome.Kind.upToDate.rawValue]

    public var connection: PostgresConnection
    public var run: String

    public init(connection: PostgresConnection, run: String) {
        self.connection = connection
        self.run = run
    }

    static let statements: [SQL] = [
        "CREATE SCHEMA IF NOT EXISTS \(ident: schema)",
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "runs") (
            name text PRIMARY KEY,
            model text NOT NULL,
            target text NOT NULL,
            fleet_file text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "waves") (
            run text NOT NULL REFERENCES \(ident: schema, "runs") ON DELETE CASCADE,
            position integer NOT NULL,
            name text NOT NULL,
            PRIMARY KEY (run, position)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ident: schema, "stores") (
            run text NOT NULL REFERENCES \(ident: schema, "runs") ON DELETE CASCADE,
            server text NOT NULL,
            store text NOT NULL,
            wave integer NOT NULL,
            position integer NOT NULL,
            outcome text CHECK (outcome IN ('migrated', 'upToDate', 'failed', 'unreached', 'skipped')),
            from_version text,
            to_version text,
            worker text,
            attempts integer NOT NULL DEFAULT 0,
            finished_at timestamptz,
            duration_ms bigint,
            error text,
            PRIMARY KEY (run, server, store)
        )
        """,
        "CREATE INDEX IF NOT EXISTS stores_pending_idx ON \(ident: schema, "stores") (run, wave, position) WHERE outcome IS NULL",
    ]

    /// Creates the journal's tables once; workers starting together wait for each other.
    func bootstrap() throws {
        try connection.transaction {
            try connection.advisoryTransactionLock(key: PostgresConnection.advisoryLockKey(for: "orchestrator:fleet-journal"))
            for statement in Self.statements { try connection.execute(statement) }
        }
    }

    /// 1. The run's row, made by the first worker (the others wait for its transaction).
    /// 2. Stores not in the run yet, in their waves; `upToDate` ones recorded as done.
    /// 3. Stores that did not reach the target are to be tried again (`outcome` NULL), but for
    ///    those another worker holds now.
    func prepare(model: String, target: String, fleetFile: String, waves: [String], stores: [(state: FleetStoreState, wave: Int)]) throws {
        try connection.transaction {
            try connection.execute("""
                INSERT INTO \(ident: Self.schema, "runs") (name, model, target, fleet_file) VALUES (\(run), \(model), \(target), \(fleetFile))
                ON CONFLICT (name) DO NOTHING
                """)
            for (position, name) in waves.enumerated() {
                try connection.execute("""
                    INSERT INTO \(ident: Self.schema, "waves") (run, position, name) VALUES (\(run), \(position), \(name)) ON CONFLICT DO NOTHING
                    """)
            }
            let reachable = Set(stores.filter { $0.state.status != .unreachable }.map(\.state.store.server))
            for server in reachable {
                // Entries that stood for an unreachable server's unknown stores.
                try connection.execute("""
                    DELETE FROM \(ident: Self.schema, "stores") WHERE run = \(run) AND server = \(server) AND outcome = 'unreached' AND from_version IS NULL
                      AND (store = '*' OR store ~ '[*?\\[]')
                    """)
            }
            for chunk in stride(from: 0, to: stores.count, by: 500).map({ Array(stores[$0..<min($0 + 500, stores.count)]) }) {
                try insert(chunk, target: target)
            }
            try connection.execute("""
                UPDATE \(ident: Self.schema, "stores") SET outcome = NULL
                WHERE (run, server, store) IN (
                    SELECT run, server, store FROM \(ident: Self.schema, "stores")
                    WHERE run = \(run) AND outcome IS NOT NULL AND outcome <> ALL(\(CatalogReader.arrayLiteral(Self.done))::text[])
                      AND NOT (outcome = 'unreached' AND (store = '*' OR store ~ '[*?\\[]'))
                    FOR UPDATE SKIP LOCKED)
                """)
        }
    }

    private func insert(_ stores: [(state: FleetStoreState, wave: Int)], target: String) throws {
        let rows = stores.map { item -> String in
            let state = item.state
            let outcome: String? = switch state.status {
            case .upToDate: FleetOutcome.Kind.upToDate.rawValue
            case .unreachable: FleetOutcome.Kind.unreached.rawValue
            default: nil
            }
            let fields: [String?] = [state.store.server, state.store.store, String(item.wave), outcome, state.version, state.detail]
            return fields.map { $0.map { quoteLiteral($0) } ?? "NULL" }.joined(separator: ", ")
        }
        try connection.execute(SQL(unsafeRaw: """
            INSERT INTO \(quoteIdentifier(Self.schema)).stores (run, server, store, wave, position, outcome, from_version, to_version, error)
            SELECT \(quoteLiteral(run)), v.server, v.store, v.wave::int,
                   coalesce((SELECT max(position) + 1 FROM \(quoteIdentifier(Self.schema)).stores WHERE run = \(quoteLiteral(run))), 0) + v.n - 1,
                   v.outcome, v.from_version, CASE WHEN v.outcome = 'upToDate' THEN \(quoteLiteral(target)) END, v.error
            FROM (SELECT *, row_number() OVER () AS n FROM (VALUES (\(rows.joined(separator: "), ("))))
                  AS t(server, store, wave, outcome, from_version, error)) AS v
            ON CONFLICT (run, server, store) DO NOTHING
            """))
    }
}
