import SQLBuilding

/// The links of a relationship as the source store keeps them, read as pairs of columns of one
/// table: `a` the row on the relationship's own side, `b` the row it points to.
struct SourceLinks: Sendable, Hashable {
    /// The table's name when the links are read (after table renames).
    var table: String
    var a: String
    var b: String
    /// Position of `b` among the `b`s of its `a`, when the source kept one (an ordered to-many).
    var orderOfB: String?
    var orderOfA: String?
    /// A to-one column: only rows where it is set hold a link.
    var requiredNotNull: String?
    /// Only links whose `a` is one of these rows (`SELECT _pk FROM …`), when the source kept the
    /// links of more entities than the destination relationship covers.
    var ownerFilter: OwnerFilter?
    /// What reading the links uses up, in source names: dropped once they are copied.
    var origins: [Origin]

    enum Origin: Sendable, Hashable {
        case column(table: String, column: String)
        case table(String)
    }

    struct OwnerFilter: Sendable, Hashable {
        var table: String
        var entities: [String]
    }

    /// The same links seen from the other side.
    var reversed: SourceLinks {
        SourceLinks(table: table, a: b, b: a, orderOfB: orderOfA, orderOfA: orderOfB, requiredNotNull: requiredNotNull, ownerFilter: nil, origins: origins)
    }
}

/// A new join table filled with the links the source kept elsewhere: the to-one column of a
/// relationship made to-many, or a join table owned by the other side before a rename. Order
/// columns take the source's order, or a deterministic one (by `_pk`) where it kept none.
struct FillJoinTable: SchemaChange {
    enum Side: Sendable, Hashable {
        /// Position of the target among the owner's targets.
        case target
        /// Position of the owner among the target's owners.
        case owner
    }

    var table: String
    var ownerColumn: String
    var targetColumn: String
    var orderColumns: [(column: String, side: Side)]
    /// `a`: the owner side.
    var links: SourceLinks
    /// The table each of the join table's columns references: `apply --online` numbers the
    /// owners of positions the source did not keep by its keys.
    var referencedTables: [String: String] = [:]

    func statements(in schema: String) -> [PlannedStatement] {
        var values: [SQL] = ["\(ident: links.a)", "\(ident: links.b)"]
        for order in orderColumns {
            let (kept, partition, position) = order.side == .target
                ? (links.orderOfB, links.a, links.b)
                : (links.orderOfA, links.b, links.a)
            if let kept {
                values.append("\(ident: kept)")
            } else {
                values.append("(row_number() OVER (PARTITION BY \(ident: partition) ORDER BY \(ident: position)) - 1)::integer")
            }
        }
        var sql: SQL = "INSERT INTO \(ident: schema, table) (\(idents: [ownerColumn, targetColumn] + orderColumns.map(\.column))) SELECT "
        sql.append(SQL.joined(values, separator: ", "))
        sql.append(" FROM \(ident: schema, links.table)")
        var conditions: [SQL] = []
        if let column = links.requiredNotNull { conditions.append("\(ident: column) IS NOT NULL") }
        if let filter = links.ownerFilter {
            conditions.append("\(ident: links.a) IN (SELECT \(ident: "_pk") FROM \(ident: schema, filter.table) WHERE \(ident: "_entity") IN (\(literals: filter.entities)))")
        }
        if !conditions.isEmpty {
            sql.append(" WHERE ")
            sql.append(SQL.joined(conditions, separator: " AND "))
        }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy links from \(links.table) into \(table)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies every link kept in \(links.table) into \(table)")]
    }
}

/// The order column of a to-many made ordered: each link's position among its owner's links,
/// counted from 0 in the order of the linked rows' `_pk`s.
struct FillOrderColumn: SchemaChange {
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

/// A one-to-one whose column changes sides (a rename changed which side sorts first): the new
/// column takes the links the other side's column held.
struct FillToOneColumn: SchemaChange {
    var table: String
    var column: String
    /// `a`: rows of `table`.
    var links: SourceLinks

    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = """
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = l.\(ident: links.b) \
            FROM \(ident: schema, links.table) AS l WHERE x.\(ident: "_pk") = l.\(ident: links.a)
            """
        if let required = links.requiredNotNull { sql.append(" AND l.\(ident: required) IS NOT NULL") }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy links from \(links.table) into \(table).\(column)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies every link kept in \(links.table) into \(table).\(column)")]
    }
}

extension TableLayout {
    /// The table a column's foreign key references.
    func referencedTable(of column: String) -> String? {
        foreignKeys.first { $0.column == column }?.referencedTable
    }
}
