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
            surveyed text,
            PRIMARY KEY (run, server, store)
        )
        """,
        // `surveyed` came with a later release: added to a journal made before it, without
        // locking the table when it is there (workers' claims hold its rows).
        """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = '\(unsafeRaw: quoteIdentifier(schema)).stores'::regclass AND attname = 'surveyed' AND NOT attisdropped) THEN
                ALTER TABLE \(ident: schema, "stores") ADD COLUMN surveyed text;
            END IF;
        END $$
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
    func prepare(model: String, target: String, fleetFile: String, waves: [String], states: [FleetStoreState], order: [(index: Int, wave: Int)]) throws {
        try connection.transaction {
            let resumed = try connection.execute("""
                INSERT INTO \(ident: Self.schema, "runs") (name, model, target, fleet_file) VALUES (\(run), \(model), \(target), \(fleetFile))
                ON CONFLICT (name) DO NOTHING RETURNING name
                """).isEmpty
            for (position, name) in waves.enumerated() {
                try connection.execute("""
                    INSERT INTO \(ident: Self.schema, "waves") (run, position, name) VALUES (\(run), \(position), \(name)) ON CONFLICT DO NOTHING
                    """)
            }
            let reachable = Set(states.filter { $0.status != .unreachable }.map(\.store.server))
            for server in reachable {
                // Entries that stood for an unreachable server's unknown stores.
                try connection.execute("""
                    DELETE FROM \(ident: Self.schema, "stores") WHERE run = \(run) AND server = \(server) AND outcome = 'unreached' AND from_version IS NULL
                      AND (store = '*' OR store ~ '[*?\\[]')
                    """)
            }
            for start in stride(from: 0, to: order.count, by: 500) {
                let chunk = order[start..<min(start + 500, order.count)].map { (state: states[$0.index], wave: $0.wave) }
                try insert(chunk, target: target)
                if resumed { try refreshSurveys(chunk) }
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
            let fields: [String?] = [
                state.store.server, state.store.store, String(item.wave), outcome, state.version, state.detail, state.surveyedCatalog?.journalText,
            ]
            return fields.map { $0.map { quoteLiteral($0) } ?? "NULL" }.joined(separator: ", ")
        }
        try connection.execute(SQL(unsafeRaw: """
            INSERT INTO \(quoteIdentifier(Self.schema)).stores (run, server, store, wave, position, outcome, from_version, to_version, error, surveyed)
            SELECT \(quoteLiteral(run)), v.server, v.store, v.wave::int,
                   coalesce((SELECT max(position) + 1 FROM \(quoteIdentifier(Self.schema)).stores WHERE run = \(quoteLiteral(run))), 0) + v.n - 1,
                   v.outcome, v.from_version, CASE WHEN v.outcome = 'upToDate' THEN \(quoteLiteral(target)) END, v.error, v.surveyed
            FROM (SELECT *, row_number() OVER () AS n FROM (VALUES (\(rows.joined(separator: "), ("))))
                  AS t(server, store, wave, outcome, from_version, error, surveyed)) AS v
            ON CONFLICT (run, server, store) DO NOTHING
            """))
    }

    /// A resumed run's stores left to do take this survey's findings in place of the earlier
    /// run's; a store a worker holds now keeps its row as it is (`SKIP LOCKED`).
    private func refreshSurveys(_ stores: [(state: FleetStoreState, wave: Int)]) throws {
        let rows = stores.map { item in
            [item.state.store.server, item.state.store.store, item.state.surveyedCatalog?.journalText].map { $0.map { quoteLiteral($0) } ?? "NULL" }
                .joined(separator: ", ")
        }
        try connection.execute(SQL(unsafeRaw: """
            UPDATE \(quoteIdentifier(Self.schema)).stores AS s SET surveyed = v.surveyed
            FROM (VALUES (\(rows.joined(separator: "), (")))) AS v(server, store, surveyed)
            WHERE s.run = \(quoteLiteral(run)) AND s.server = v.server AND s.store = v.store
              AND (s.run, s.server, s.store) IN (
                SELECT run, server, store FROM \(quoteIdentifier(Self.schema)).stores
                WHERE run = \(quoteLiteral(run)) AND coalesce(outcome, '') <> ALL(\(quoteLiteral(CatalogReader.arrayLiteral(Self.done)))::text[])
                FOR UPDATE SKIP LOCKED)
            """))
    }
}

extension SurveyedCatalog {
    /// As the journal keeps it (`stores.surveyed`), so that a run holds no store's survey in
    /// memory while it migrates: each worker reads it with the store's claim.
    var journalText: String? {
        (try? JSONEncoder().encode(self)).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Nil for a row without one (a store not surveyed, or a journal row made by an earlier
    /// release): the store's checks read its catalog under the lock.
    init?(journalText: String?) {
        guard let data = journalText?.data(using: .utf8), let decoded = try? JSONDecoder().decode(Self.self, from: data) else { return nil }
        self = decoded
    }
}
