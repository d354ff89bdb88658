import SQLBuilding

/// The order column of a to-many made ordered: each link's position among its owner's links,
/// counted from 0 in the order of the linked rows' `_pk`s.
struct FillOrderColumn: SchemaChange {
    var kind: ChangeKind { .fillOrderColumn(self) }
    var table: String
    var column: String
    /// The owner of each link: the inverse's to-one column (one-to-many), or a join table column.
    var partitionBy: String
    /// What orders the links within an owner.
    var orderBy: String
    /// Columns identifying a row: `_pk`, or a join table's pair.
    var keys: [String]
    /// The table `partitionBy` references: `apply --online` numbers the owners by its keys.
    var ownerTable: String?

    static func oneToMany(table: String, column: String, ownerColumn: String, ownerTable: String?) -> FillOrderColumn {
        FillOrderColumn(table: table, column: column, partitionBy: ownerColumn, orderBy: "_pk", keys: ["_pk"], ownerTable: ownerTable)
    }

    /// The positions come out of the window in owner order, which is not the table's order: joined
    /// as they come (a hash join probed in that order), every row's update reads and writes a
    /// page at random, and a table larger than `shared_buffers` is read and written about once
    /// per row. Sorted by the keys again, they meet the table's rows in key order (a merge join
    /// with its primary key), so the update walks the pages in turn (docs/lightweight-migration.md).
    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = """
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = o.position \
            FROM (SELECT \(idents: keys), (row_number() OVER (PARTITION BY \(ident: partitionBy) ORDER BY \(ident: orderBy)) - 1)::integer AS position \
            FROM \(ident: schema, table) WHERE \(ident: partitionBy) IS NOT NULL ORDER BY \(idents: keys)) AS o WHERE 
            """
        sql.append(SQL.joined(keys.map { "x.\(ident: $0) = o.\(ident: $0)" }, separator: " AND "))
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "number \(table).\(column) by \(orderBy) within each \(partitionBy)")]
    }

    var hazards: [Hazard] {
        [.fullScan("numbers every link in \(table)")]
    }
}

extension FillOrderColumn: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        guard let ownerTable else {
            return .refused(OnlineRefusal(.onlineUnsupportedPositionOwners, "number \(table).\(column): the table of its owners is not known, so its batches cannot walk them (docs/online-migrations.md, Limits)"))
        }
        let positions = OnlinePositions(table: table, column: column, owner: partitionBy, orderBy: orderBy, keys: keys, ownerTable: ownerTable)
        let (phases, switchOver) = positions.form(in: schema)
        return .phasesThenAtSwitchOver(phases, switchOver)
    }
}
