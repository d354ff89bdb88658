import Planning
import PostgresClient
import SQLBuilding

/// What the application built on a store's tables that a migration replacing the tables cannot
/// take along (docs/store-format.md, "What the application added"): views and materialized views
/// (bound to the old tables, they would keep reading the backup, or stop the drop), functions
/// with SQL bodies, foreign keys from other schemas, rules, triggers and row-level security
/// policies the application added (publications are carried: `StorePublications`). A
/// heavyweight step replaces every table of the store: `plan` lists each as a blocker. A step under `apply --online` replaces the tables
/// it rebuilds (`OnlinePlan.rebuiltTables`): `apply --online` checks them under the store's
/// lock before any step runs (`StoreSurroundings.dependentsOfRebuiltTables`).
enum StoreDependents {
    /// Refuses a plan made for `apply --online` whose online steps rebuild tables the
    /// application built on (decided in Planning: `MigrationPlan.dependentsOfRebuiltTables`; a
    /// heavyweight step's are blockers of the plan).
    static func check(_ plan: MigrationPlan) throws {
        if !plan.dependentsOfRebuiltTables.isEmpty { throw DependentObjects(objects: plan.dependentsOfRebuiltTables) }
    }

    /// Each dependent ("view public.names" on `animal`); our own triggers (named
    /// `_orchestrator_…` and `orchestrator_online_…`) and what the store's own schemas hold
    /// (`<store>~…`) are not the application's.
    static func dependents(of store: String, tables: [String]?, on connection: PostgresConnection) throws -> [StoreDependent] {
        let chosen: SQL = tables.map { "AND c.relname IN (\(literals: $0))" } ?? ""
        let ours: SQL = "left(n.nspname, \(store.count + 1)) = \(store + "~")"
        let result = try connection.execute("""
            WITH t AS (
                SELECT c.oid, c.relnamespace, c.relname AS name FROM pg_class c
                WHERE c.relnamespace = to_regnamespace(\(quoteIdentifier(store))) AND c.relkind IN ('r', 'p') \(chosen)
            )
            SELECT DISTINCT CASE v.relkind WHEN 'm' THEN 'materialized view ' ELSE 'view ' END || v.oid::regclass::text AS object, t.name
            FROM pg_depend d JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
            JOIN pg_class v ON v.oid = r.ev_class JOIN pg_namespace n ON n.oid = v.relnamespace
            JOIN t ON d.refclassid = 'pg_class'::regclass AND d.refobjid = t.oid
            WHERE v.oid <> t.oid AND NOT (\(ours))
            UNION
            SELECT DISTINCT 'function ' || p.oid::regprocedure::text, t.name
            FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
            JOIN pg_namespace n ON n.oid = p.pronamespace
            JOIN t ON d.refclassid = 'pg_class'::regclass AND d.refobjid = t.oid
            WHERE NOT (\(ours))
            UNION
            SELECT 'foreign key ' || quote_ident(k.conname) || ' of ' || k.conrelid::regclass::text, t.name
            FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace JOIN t ON k.confrelid = t.oid
            WHERE k.contype = 'f' AND k.connamespace <> t.relnamespace AND NOT (\(ours))
            UNION
            SELECT 'rule ' || quote_ident(r.rulename), t.name FROM pg_rewrite r JOIN t ON r.ev_class = t.oid
            UNION
            SELECT 'trigger ' || quote_ident(g.tgname), t.name FROM pg_trigger g JOIN t ON g.tgrelid = t.oid
            WHERE NOT g.tgisinternal AND left(g.tgname, 14) <> '_orchestrator_' AND left(g.tgname, \(OnlineTrigger.prefix.count)) NOT IN (\(OnlineTrigger.prefix), \(OnlineTrigger.firstPrefix))
            UNION
            SELECT 'row-level security policy ' || quote_ident(p.polname), t.name FROM pg_policy p JOIN t ON p.polrelid = t.oid
            UNION
            SELECT 'row-level security', t.name FROM pg_class c JOIN t ON c.oid = t.oid WHERE c.relrowsecurity
            ORDER BY 1, 2
            """)
        return result.rows.indices.map { row in
            StoreDependent(object: result.value(row, "object") ?? "", table: result.value(row, "name") ?? "")
        }
    }
}

/// Objects the application built on a table `apply --online` rebuilds would be lost or left on
/// the old table: nothing was changed.
public struct DependentObjects: Error, CustomStringConvertible {
    /// Each as "view public.names on store.animal (step 1 of 1 replaces every table of store)".
    public var objects: [String]

    public var description: String {
        "the migration would leave behind what the application built on the store's tables: "
            + objects.joined(separator: "; ")
            + ". Nothing was changed: drop them, migrate, and create them again (docs/store-format.md, \"What the application added\")"
    }
}
