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

extension TableLayout {
    /// The table a column's foreign key references.
    func referencedTable(of column: String) -> String? {
        foreignKeys.first { $0.column == column }?.referencedTable
    }
}
