import Foundation
import PostgresClient
import SQLBuilding

/// What `status` shows of a store's running `apply` (docs/metadata-schema.md, `runs`): one row
/// per store in `orchestrator.runs`, written by the run (`RunRecord`) at each step and phase,
/// when it pauses, is throttled or waits to switch over, and at most once a second in between;
/// deleted when the run ends. A row whose session is gone (a killed run) is not a running one.
public struct RunningMigration: Sendable, Equatable {
    public enum State: String, Sendable {
        case running
        /// `orchestrator control pause`.
        case paused
        /// `--max-replica-lag`, `--max-slot-lag`.
        case throttled
        /// `apply --postpone-switch-over`, until `orchestrator control proceed`.
        case waitingToSwitchOver
    }

    /// `step 1 of 2: lightweight 'v1' -> 'v2'`.
    public var step: String
    /// The phase or pass under way (`backfill item.rating`, `createInstances RecipeToRecipe`, `catchUp`).
    public var phase: String?
    /// Rows done in the phase so far, as its last batch reported them.
    public var rowsDone: Int
    public var state: State
    /// Why it waits (`paused by orchestrator control (by …)`, `throttled: standby s1 …`).
    public var reason: String?
    /// When the run last wrote the row, ISO 8601 in UTC.
    public var updatedAt: String
    /// The session running it.
    public var pid: Int
}

enum StoreRuns {
    static let table = "runs"

    /// Layout 4: the run rows, and `orchestrator control proceed` beside `pause` in `controls`.
    static let statements: [SQL] = [
        """
        CREATE TABLE IF NOT EXISTS \(ident: MetadataSchema.schema, table) (
            store text PRIMARY KEY,
            pid integer NOT NULL,
            step text NOT NULL,
            phase text,
            rows_done bigint NOT NULL DEFAULT 0,
            state text NOT NULL CHECK (state IN ('running', 'paused', 'throttled', 'waitingToSwitchOver')),
            reason text,
            started_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        "ALTER TABLE \(ident: MetadataSchema.schema, StoreControls.table) ADD COLUMN IF NOT EXISTS postponed text",
        "ALTER TABLE \(ident: MetadataSchema.schema, StoreControls.table) ADD COLUMN IF NOT EXISTS proceed boolean NOT NULL DEFAULT false",
    ]

    /// True when the metadata has the `runs` table (layout 4 and later).
    static func exists(on connection: PostgresConnection) throws -> Bool {
        try MetadataSchema.hasTable(table, on: connection)
    }
}

extension RunningMigration {
    /// The store's running migration, read without writing anything; nil when none runs (no
    /// row, its session gone, or metadata older than layout 4).
    public static func read(store: String, on connection: PostgresConnection) throws -> RunningMigration? {
        guard try StoreRuns.exists(on: connection) else { return nil }
        let result = try connection.execute("""
            SELECT r.pid, r.step, r.phase, r.rows_done, r.state, r.reason,
                   to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated
            FROM \(ident: MetadataSchema.schema, StoreRuns.table) r
            WHERE r.store = \(store)
              AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.pid AND a.backend_start <= r.started_at)
            """)
        guard !result.isEmpty, let step = result.value(0, "step") else { return nil }
        return RunningMigration(
            step: step, phase: result.value(0, "phase"), rowsDone: Int(result.int(0, "rows_done") ?? 0),
            state: result.value(0, "state").flatMap(State.init(rawValue:)) ?? .running, reason: result.value(0, "reason"),
            updatedAt: result.value(0, "updated") ?? "", pid: Int(result.int(0, "pid") ?? 0)
        )
    }
}
