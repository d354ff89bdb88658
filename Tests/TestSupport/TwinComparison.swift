import Testing
import PostgresClient
import SQLBuilding

/// A store migrated online compared with its offline twin: the same data (the same writes, or a
/// copy of the same rows) migrated without `--online`. The two must be the same store.
public enum TwinComparison {
    /// Expects the rows read from the store migrated online to be the offline twin's, in
    /// order, and names each that differs.
    public static func expectSameRows<Row: Equatable>(_ online: [Row], _ offline: [Row], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(online.count == offline.count, "\(online.count) rows online, \(offline.count) offline", sourceLocation: sourceLocation)
        for (row, expected) in zip(online, offline) where row != expected {
            Issue.record("online \(row) differs from offline \(expected)", sourceLocation: sourceLocation)
        }
    }

    /// Expects `live` and `twin`, two schemas of one database, to be the same store
    /// (`differences`), and every table of `twin` to hold rows, or the comparison proves little.
    public static func expectSameStore(
        _ live: String, asOfflineTwin twin: String, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let differences = try differences(live, twin, on: connection)
        #expect(differences.isEmpty, "store \(live) differs from its offline twin \(twin): \(differences.prefix(5))", sourceLocation: sourceLocation)
        for table in try tables(of: twin, on: connection) {
            #expect(try rowCount(schema: twin, table: table, on: connection) > 0, "\(table) is empty: the comparison proves nothing", sourceLocation: sourceLocation)
        }
    }

    /// What differs between two stores, one line each (empty when they are the same): catalog
    /// facts in one only (or the same facts listed otherwise), tables in one only, and per table
    /// the rows in one only (at most three of each shown), with the number of rows compared.
    public static func differences(_ live: String, _ twin: String, on connection: PostgresConnection) throws -> [String] {
        var found: [String] = []
        let liveCatalog = try catalog(of: live, on: connection)
        let twinCatalog = try catalog(of: twin, on: connection)
        let twinFacts = Set(twinCatalog), liveFacts = Set(liveCatalog)
        found += liveCatalog.filter { !twinFacts.contains($0) }.map { "catalog, online only: \($0)" }
        found += twinCatalog.filter { !liveFacts.contains($0) }.map { "catalog, offline only: \($0)" }
        if found.isEmpty && liveCatalog != twinCatalog { found.append("catalog: the same facts, repeated otherwise") }
        let liveTables = try tables(of: live, on: connection), twinTables = try tables(of: twin, on: connection)
        found += liveTables.filter { !twinTables.contains($0) }.map { "table \($0): online only" }
        found += twinTables.filter { !liveTables.contains($0) }.map { "table \($0): offline only" }
        for table in twinTables where liveTables.contains(table) {
            let names = try columns(in: twin, table: table, on: connection).map(\.name).sorted()
            guard names == (try columns(in: live, table: table, on: connection).map(\.name).sorted()) else { continue }
            let onlineRows = try rows(live, table, columns: names, on: connection)
            let offlineRows = try rows(twin, table, columns: names, on: connection)
            guard onlineRows != offlineRows else { continue }
            let show = { (row: [String?]) in "(" + zip(names, row).map { "\($0)=\($1 ?? "NULL")" }.joined(separator: ", ") + ")" }
            let onlineOnly = multisetDifference(onlineRows, offlineRows), offlineOnly = multisetDifference(offlineRows, onlineRows)
            found.append("""
                rows of \(table): \(onlineRows.count) online, \(offlineRows.count) offline; \
                online only: \(onlineOnly.prefix(3).map(show).joined(separator: " ")); \
                offline only: \(offlineOnly.prefix(3).map(show).joined(separator: " "))
                """)
        }
        return found
    }

    /// The store's catalog as sorted facts, named without its schema: columns (type,
    /// nullability, default, identity), constraints, indexes and sequences.
    public static func catalog(of schema: String, on connection: PostgresConnection) throws -> [String] {
        try connection.execute("SET search_path = \(ident: schema)")
        defer { _ = try? connection.execute("RESET search_path") }
        let facts = try connection.execute("""
            SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' nullable=' || is_nullable
                   || ' default=' || coalesce(column_default, '-') || ' identity=' || is_identity AS fact
            FROM information_schema.columns WHERE table_schema = \(schema)
            UNION ALL
            SELECT 'constraint ' || rel.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid)
            FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid JOIN pg_namespace n ON n.oid = rel.relnamespace
            WHERE n.nspname = \(schema)
            UNION ALL
            SELECT 'index ' || tablename || ' ' || indexname || ' ' || replace(indexdef, ' ' || quote_ident(schemaname) || '.', ' ')
            FROM pg_indexes WHERE schemaname = \(schema)
            UNION ALL
            SELECT 'sequence ' || sequencename FROM pg_sequences WHERE schemaname = \(schema)
            ORDER BY 1
            """)
        return facts.rows.map { $0[0] ?? "" }
    }

    /// Tables of `schema`, sorted.
    public static func tables(of schema: String, on connection: PostgresConnection) throws -> [String] {
        try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(schema) ORDER BY 1").rows.compactMap { $0[0] }
    }

    /// Every row of `schema.table` as text, its columns in name order, sorted.
    public static func rows(_ schema: String, _ table: String, columns names: [String], on connection: PostgresConnection) throws -> [[String?]] {
        guard !names.isEmpty else { return [] }
        let texts = SQL.joined(names.map { "\(ident: $0)::text" }, separator: ", ")
        let order = SQL.joined((1...names.count).map { "\(unsafeRaw: String($0))" }, separator: ", ")
        return try connection.execute("SELECT \(texts) FROM \(ident: schema, table) ORDER BY \(order)").rows
    }

    /// The rows of `rows` left once each row of `other` took away one equal to it.
    public static func multisetDifference(_ rows: [[String?]], _ other: [[String?]]) -> [[String?]] {
        var remaining = Dictionary(other.map { ($0, 1) }, uniquingKeysWith: +)
        return rows.filter { row in
            guard let count = remaining[row], count > 0 else { return true }
            remaining[row] = count - 1
            return false
        }
    }
}
