import Planning
import PostgresClient
import SQLBuilding

/// While an online step runs, the instances a policy's hook inserts are recorded under the
/// source row being mapped (`<staging>._policy_instances`), so that a catch-up round mapping
/// that row again deletes them first; and tables keeping their source keys take new keys from
/// the old store's sequence, which the application's rows written meanwhile take theirs from.
struct OnlineInstances {
    var store: String
    /// Tables of the new store keeping their source keys, with each one's source table.
    var keptKeys: [String: String]

    /// The sequence whose keys a new instance of `table` takes, quoted; nil: the staging table's.
    func sequence(of table: String) -> String? {
        keptKeys[table].map { quoteIdentifier(store) + "." + quoteIdentifier($0) }
    }
}

extension InstanceWriter {
    /// Records `instance` under `source`, or under none (NULL) when a hook over the whole
    /// entity mapping inserted it.
    func recordInserted(_ instance: DestinationInstance, by entityMapping: String, for source: Int64?) throws {
        guard online != nil else { return }
        insertedBySource.append([entityMapping, source.map(String.init), try columns(of: instance.entity).table, String(instance.primaryKey)])
    }

    /// After a block of keys from the old store's sequence: the staging table's sequence moves
    /// past it too, so that a run continuing this one without `--online` (which draws from
    /// the staging sequence) cannot take one of those keys again.
    func keepStagingSequence(of table: String, past key: Int64) throws {
        guard online?.sequence(of: table) != nil else { return }
        let sequence = quoteIdentifier(schema) + "." + quoteIdentifier(table)
        let serial: SQL = "pg_get_serial_sequence(\(literal: sequence), '_pk')"
        _ = try connection.execute("SELECT setval(\(serial), greatest(\(key), nextval(\(serial))))")
    }

    func flushInsertedBySource() throws {
        guard !insertedBySource.isEmpty else { return }
        try connection.copyIn("""
            COPY \(ident: schema, OnlineCatchUp.policyInstancesTable) (entity_mapping, source_pk, destination_table, destination_pk) FROM STDIN
            """, rows: insertedBySource)
        insertedBySource.removeAll(keepingCapacity: true)
    }
}
