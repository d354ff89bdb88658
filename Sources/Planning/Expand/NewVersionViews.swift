import ObjectModel
import SQLBuilding

/// `apply --expand` of a heavyweight step (docs/rolling-deploys.md, "Heavyweight steps"): the
/// old release keeps the store's tables (still at its version, written as always, its writes
/// carried into the staging schema by the catch-up rounds), and the new version is served
/// **read-only** through a schema of views over the staging tables, `<store>@<new version>`,
/// until `complete` swaps them in.
///
/// One view per table of the new layout, its columns in the layout's order, reading the
/// staging table of that name. A view keeps its table by identity, so the rounds, which delete
/// and insert staging rows (never drop a table), leave it working. Writes raise
/// `read_only_sql_transaction` (25006) naming the store, the version and `complete`: a
/// row-level INSTEAD OF trigger takes every write over from PostgreSQL (so the view is no
/// longer written through to its table), and a statement-level one raises even when the
/// statement touches no row. Pure.
public struct NewVersionViews: Sendable, Hashable {
    public var store: String
    public var oldVersion: String
    public var version: String
    public var staging: String
    /// The schema of the views.
    public var schema: String
    /// The new version's tables, laid out in `staging`.
    public var layout: StoreLayout
    /// With a reverse mapping model: the tables written through it, the others read-only.
    public var writes: NewVersionWrites?

    /// Whether every table of the new version is read-only.
    public var isReadOnly: Bool { writes?.writtenTables.isEmpty ?? true }

    /// The views of `destination`'s tables in `staging` (`StagedWork.stagingSchema`).
    public init(store: String, from source: ModelVersion, to destination: ModelVersion, staging: String) {
        self.store = store
        oldVersion = source.name
        version = destination.name
        self.staging = staging
        schema = OldVersionViews.schemaName(store: store, version: destination.name)
        layout = StoreLayout(version: destination, schema: staging)
    }

    static let refusal = "_read_only"

    /// What a write through the views raises.
    public var readOnlyMessage: String {
        let written = writes.map { writes in
            writes.writtenTables.isEmpty
                ? "; the reverse mapping model \(writes.file) writes none of its tables: plan --expand says why"
                : "; of its tables, the reverse mapping model \(writes.file) writes only \(writes.writtenTables.joined(separator: ", ")): plan --expand says why not the others"
        } ?? ""
        return "store \(store): version '\(version)' is served read-only in \"\(schema)\" until orchestrator complete --store \(store) (apply --expand of a heavyweight step; '\(oldVersion)' writes the store's tables meanwhile\(written))"
    }

    /// The schema, the refusing function, each view with its two triggers; one transaction.
    /// `CREATE SCHEMA` fails on a schema of that name the expansion did not make.
    public var statements: [SQL] {
        let body: SQL = """
            BEGIN RAISE EXCEPTION USING ERRCODE = 'read_only_sql_transaction', MESSAGE = \(literal: readOnlyMessage), \
            HINT = \(literal: "read it here; write it once orchestrator complete --store \(store) has run (the views are then gone and search_path falls through to \(store))"); END
            """
        var statements: [SQL] = [
            "CREATE SCHEMA \(ident: schema)",
            "COMMENT ON SCHEMA \(ident: schema) IS \(literal: "orchestrator: version \(version) of store \(store), served \(isReadOnly ? "read-only" : "written through \(writes?.file ?? "")") until complete")",
            "CREATE FUNCTION \(ident: schema, Self.refusal)() RETURNS trigger LANGUAGE plpgsql AS \(SQL.dollarQuoted(body, tag: "expand"))",
        ]
        for table in layout.tables {
            statements.append("CREATE VIEW \(ident: schema, table.name) AS SELECT \(idents: table.columns.map(\.name)) FROM \(ident: staging, table.name)")
            if let function = writes?.function(for: self, table: table) ?? writes?.joinFunction(for: self, table: table) {
                statements.append(function)
                statements.append("""
                    CREATE TRIGGER \(ident: "write") INSTEAD OF INSERT OR UPDATE OR DELETE ON \(ident: schema, table.name) \
                    FOR EACH ROW EXECUTE FUNCTION \(ident: schema, NewVersionWrites.functionName(of: table.name))()
                    """)
                continue
            }
            statements.append("""
                CREATE TRIGGER \(ident: "read_only_row") INSTEAD OF INSERT OR UPDATE OR DELETE ON \(ident: schema, table.name) \
                FOR EACH ROW EXECUTE FUNCTION \(ident: schema, Self.refusal)()
                """)
            statements.append("""
                CREATE TRIGGER \(ident: "read_only") BEFORE INSERT OR UPDATE OR DELETE ON \(ident: schema, table.name) \
                FOR EACH STATEMENT EXECUTE FUNCTION \(ident: schema, Self.refusal)()
                """)
        }
        return statements
    }

    /// Dropped by `rollback`.
    public var drop: SQL { "DROP SCHEMA IF EXISTS \(ident: schema) CASCADE" }

    /// The switch-over's turn, an advisory lock (two-key form, `hashtext` of the store): the
    /// write guard takes it alone before it locks the store's tables, each write through the
    /// views shares it first. A write arriving while the guard holds it waits there, holding
    /// nothing the switch-over needs (the swap renames the views' schema, which takes no lock
    /// on them), and then finds the switch-over done: it writes the store's table, now at the
    /// new version, as given (`NewVersionWrites`).
    public var switchOverTurn: (guardTakes: SQL, writerShares: SQL) {
        let key: SQL = "\(literal: Int64(Self.turnClass)), hashtext(\(literal: "orchestrator:expand:" + store))"
        return ("SELECT pg_advisory_xact_lock(\(key))", "PERFORM pg_advisory_xact_lock_shared(\(key));")
    }

    static let turnClass = 1_701_082_212

    /// True in a write's trigger once the swap has committed (the staging schema is gone): a
    /// scan of `pg_namespace` under the statement's snapshot, not a cache lookup, which a
    /// session that waited at the turn may not have refreshed yet.
    var switchedOver: SQL {
        "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = \(literal: staging))"
    }

    /// What the schema is renamed to in the swap's transaction (a rename takes no lock on the
    /// views, which the guard holds): a session waiting at a view then finds, by its
    /// `search_path`, the store's table of that name, at the new version. Dropped once the
    /// guard is gone.
    public var retiredSchema: String { String(schema.prefix(54)) + "~retired" }
    public var retire: SQL { "ALTER SCHEMA \(ident: schema) RENAME TO \(ident: retiredSchema)" }
    public var dropRetired: SQL { "DROP SCHEMA IF EXISTS \(ident: retiredSchema) CASCADE" }
}
