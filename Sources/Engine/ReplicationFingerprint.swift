import PostgresClient
import SQLBuilding

/// A digest of everything a store's `ReplicationTopology` is read from but its own tables:
/// the rows of pg_publication, pg_publication_rel and pg_publication_namespace (identity and row
/// version, `xmin`: a publication made, altered or dropped writes new ones), of pg_subscription
/// (identity, name, enabled: the columns every role may read) and pg_subscription_rel (which
/// subscription writes into which table), both of this database's subscriptions only, the names and state of the replication slots
/// and of the standbys. Not the lags, which move all the time and decide nothing (`plan` shows
/// them). With the store's catalog fingerprint (its tables, which `FOR ALL TABLES` and `FOR
/// TABLES IN SCHEMA` publications follow), the same digest means the same topology but for the
/// lags. One statement for the whole server, small catalogs read whole.
enum ReplicationFingerprint {
    /// The digest as a scalar expression, to be read alone or beside another statement's columns.
    static func expression(on connection: PostgresConnection) -> SQL {
        let namespaces: SQL = connection.serverVersion >= 150000
            ? "(SELECT string_agg(oid || ':' || xmin, ',' ORDER BY oid) FROM pg_publication_namespace)"
            : "''"
        return """
            md5(concat(
                'p', (SELECT string_agg(oid || ':' || xmin, ',' ORDER BY oid) FROM pg_publication),
                '|r', (SELECT string_agg(oid || ':' || xmin, ',' ORDER BY oid) FROM pg_publication_rel),
                '|n', \(namespaces),
                '|s', (SELECT string_agg(oid || ':' || subname || ':' || subenabled, ',' ORDER BY oid) FROM pg_subscription WHERE \(thisDatabase)),
                '|w', (SELECT string_agg(w.srsubid || ':' || w.srrelid, ',' ORDER BY w.srsubid, w.srrelid)
                       FROM pg_subscription_rel w WHERE w.srsubid IN (SELECT oid FROM pg_subscription WHERE \(thisDatabase))),
                '|l', (SELECT string_agg(slot_name || ':' || slot_type || ':' || active, ',' ORDER BY slot_name) FROM pg_replication_slots WHERE \(ReplicationCatalog.slotsOfTheDatabase)),
                '|b', (SELECT string_agg(\(ReplicationCatalog.standbyName) || ':' || coalesce(r.state, 'unknown'), ',' ORDER BY \(ReplicationCatalog.standbyName), r.state) FROM pg_stat_replication r WHERE \(ReplicationCatalog.physicalStandby))
            ))
            """
    }

    /// pg_subscription and pg_subscription_rel are the server's: a subscription of another
    /// database writes into none of this one's stores (the topology reads only this
    /// database's), so its changes are not this digest's.
    private static let thisDatabase: SQL = "subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())"

    static func read(on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT \(expression(on: connection)) AS replication").value(0, "replication")
    }
}
