import Planning
import PostgresClient
import SQLBuilding

/// Reads a store's `ReplicationTopology` from the catalog: the publications that include its
/// tables, the subscriptions writing into them, the database's replication slots and the
/// physical standbys streaming from the server.
enum ReplicationCatalog {
    static func topology(store: String, on connection: PostgresConnection) throws -> ReplicationTopology {
        try topologies(of: [store], on: connection)[store] ?? ReplicationTopology()
    }

    /// The topologies of `stores` in four statements however many they are (`fleet apply`'s
    /// survey reads a server's stores at once): the publications and subscriptions of each, and
    /// the server's slots and standbys, the same for all of them.
    static func topologies(of stores: [String], on connection: PostgresConnection) throws -> [String: ReplicationTopology] {
        var topologies = Dictionary(uniqueKeysWithValues: stores.map { ($0, ReplicationTopology()) })
        let names = CatalogReader.arrayLiteral(stores)
        // `FOR TABLES IN SCHEMA` came with PostgreSQL 15; libpq knows the version without asking.
        let inSchema: SQL = connection.serverVersion >= 150000
            ? "EXISTS (SELECT 1 FROM pg_publication_namespace pn JOIN pg_namespace sn ON sn.oid = pn.pnnspid WHERE pn.pnpubid = p.oid AND sn.nspname = t.schemaname)"
            : "false"
        let publications = try connection.execute("""
            SELECT t.schemaname AS store, p.pubname, p.puballtables AS all_tables, \(inSchema) AS in_schema, t.tablename
            FROM pg_publication p JOIN pg_publication_tables t ON t.pubname = p.pubname
            WHERE t.schemaname IN (SELECT unnest(\(names)::name[]))
            ORDER BY t.schemaname, p.pubname, t.tablename
            """)
        for row in publications.rows.indices {
            guard let store = publications.value(row, "store") else { continue }
            let name = publications.value(row, "pubname") ?? "", table = publications.value(row, "tablename") ?? ""
            guard var found = topologies[store]?.publications else { continue }
            if found.last?.name == name {
                found[found.count - 1].tables.append(table)
            } else {
                let form: ReplicationTopology.Publication.Form = publications.bool(row, "all_tables") == true
                    ? .allTables : publications.bool(row, "in_schema") == true ? .tablesInSchema : .tableList
                found.append(.init(name: name, form: form, tables: [table]))
            }
            topologies[store]?.publications = found
        }
        let subscriptions = try connection.execute("""
            SELECT n.nspname AS store, s.subname, s.subenabled AS enabled, c.relname, r.srsubstate::text AS state
            FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid JOIN pg_class c ON c.oid = r.srrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname IN (SELECT unnest(\(names)::name[])) AND s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY n.nspname, s.subname, c.relname
            """)
        for row in subscriptions.rows.indices {
            guard let store = subscriptions.value(row, "store") else { continue }
            let name = subscriptions.value(row, "subname") ?? "", table = subscriptions.value(row, "relname") ?? ""
            guard var found = topologies[store]?.subscriptions else { continue }
            if found.last?.name == name {
                found[found.count - 1].tables.append(table)
            } else {
                found.append(.init(name: name, isEnabled: subscriptions.bool(row, "enabled") == true, tables: [table]))
            }
            if let state = subscriptions.value(row, "state"), !["r", "s"].contains(state) {
                found[found.count - 1].syncing[table] = state
            }
            topologies[store]?.subscriptions = found
        }
        let slots = try connection.execute("""
            SELECT slot_name, slot_type, active,
                   CASE WHEN pg_is_in_recovery() THEN NULL
                        ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), coalesce(confirmed_flush_lsn, restart_lsn))::bigint END AS lag
            FROM pg_replication_slots
            WHERE \(slotsOfTheDatabase)
            ORDER BY slot_name
            """)
        let serverSlots: [ReplicationTopology.Slot] = slots.rows.indices.map { row in
            .init(name: slots.value(row, "slot_name") ?? "", kind: slots.value(row, "slot_type") ?? "", isActive: slots.bool(row, "active") == true, lagBytes: slots.int(row, "lag"))
        }
        let standbys = try connection.execute("""
            SELECT \(standbyName) AS name, coalesce(r.state, 'unknown') AS state,
                   extract(epoch FROM r.replay_lag)::float8 AS lag
            FROM pg_stat_replication r
            WHERE \(physicalStandby)
            ORDER BY 1
            """)
        let serverStandbys: [ReplicationTopology.Standby] = standbys.rows.indices.map { row in
            .init(name: standbys.value(row, "name") ?? "", state: standbys.value(row, "state") ?? "", replayLagSeconds: standbys.value(row, "lag").flatMap(Double.init))
        }
        for store in stores {
            topologies[store]?.slots = serverSlots
            topologies[store]?.standbys = serverStandbys
        }
        return topologies
    }

    /// The slots a store's topology shows: physical ones, and logical ones of its database.
    static let slotsOfTheDatabase: SQL = "NOT temporary AND (slot_type = 'physical' OR database = current_database())"
    /// A `pg_stat_replication` row (`r`) that is a physical standby, not a logical slot's sender.
    static let physicalStandby: SQL = "NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical')"
    /// How a standby (`r`) is named.
    static let standbyName: SQL = "coalesce(nullif(r.application_name, ''), r.client_addr::text, 'pid ' || r.pid)"
}
