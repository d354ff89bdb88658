import Planning
import PostgresClient
import SQLBuilding

/// Reads a store's `ReplicationTopology` from the catalog: the publications that include its
/// tables, the subscriptions writing into them, the database's replication slots and the
/// physical standbys streaming from the server.
enum ReplicationCatalog {
    static func topology(store: String, on connection: PostgresConnection) throws -> ReplicationTopology {
        var topology = ReplicationTopology()
        let modern = try StorePublications.hasSchemaPublications(on: connection)
        let inSchema: SQL = modern
            ? "EXISTS (SELECT 1 FROM pg_publication_namespace pn WHERE pn.pnpubid = p.oid AND pn.pnnspid = to_regnamespace(\(quoteIdentifier(store))))"
            : "false"
        let publications = try connection.execute("""
            SELECT p.pubname, p.puballtables AS all_tables, \(inSchema) AS in_schema, t.tablename
            FROM pg_publication p JOIN pg_publication_tables t ON t.pubname = p.pubname
            WHERE t.schemaname = \(store)
            ORDER BY p.pubname, t.tablename
            """)
        for row in publications.rows.indices {
            let name = publications.value(row, "pubname") ?? "", table = publications.value(row, "tablename") ?? ""
            if topology.publications.last?.name == name {
                topology.publications[topology.publications.count - 1].tables.append(table)
                continue
            }
            let form: ReplicationTopology.Publication.Form = publications.bool(row, "all_tables") == true
                ? .allTables : publications.bool(row, "in_schema") == true ? .tablesInSchema : .tableList
            topology.publications.append(.init(name: name, form: form, tables: [table]))
        }
        let subscriptions = try connection.execute("""
            SELECT s.subname, s.subenabled AS enabled, c.relname, r.srsubstate::text AS state
            FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid JOIN pg_class c ON c.oid = r.srrelid
            WHERE c.relnamespace = to_regnamespace(\(quoteIdentifier(store))) AND s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY s.subname, c.relname
            """)
        for row in subscriptions.rows.indices {
            let name = subscriptions.value(row, "subname") ?? "", table = subscriptions.value(row, "relname") ?? ""
            if topology.subscriptions.last?.name != name {
                topology.subscriptions.append(.init(name: name, isEnabled: subscriptions.bool(row, "enabled") == true, tables: []))
            }
            topology.subscriptions[topology.subscriptions.count - 1].tables.append(table)
            if let state = subscriptions.value(row, "state"), !["r", "s"].contains(state) {
                topology.subscriptions[topology.subscriptions.count - 1].syncing[table] = state
            }
        }
        let slots = try connection.execute("""
            SELECT slot_name, slot_type, active,
                   CASE WHEN pg_is_in_recovery() THEN NULL
                        ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), coalesce(confirmed_flush_lsn, restart_lsn))::bigint END AS lag
            FROM pg_replication_slots
            WHERE NOT temporary AND (slot_type = 'physical' OR database = current_database())
            ORDER BY slot_name
            """)
        topology.slots = slots.rows.indices.map { row in
            .init(name: slots.value(row, "slot_name") ?? "", kind: slots.value(row, "slot_type") ?? "", isActive: slots.bool(row, "active") == true, lagBytes: slots.int(row, "lag"))
        }
        let standbys = try connection.execute("""
            SELECT coalesce(nullif(r.application_name, ''), r.client_addr::text, 'pid ' || r.pid) AS name, coalesce(r.state, 'unknown') AS state,
                   extract(epoch FROM r.replay_lag)::float8 AS lag
            FROM pg_stat_replication r
            WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical')
            ORDER BY 1
            """)
        topology.standbys = standbys.rows.indices.map { row in
            .init(name: standbys.value(row, "name") ?? "", state: standbys.value(row, "state") ?? "", replayLagSeconds: standbys.value(row, "lag").flatMap(Double.init))
        }
        return topology
    }
}
