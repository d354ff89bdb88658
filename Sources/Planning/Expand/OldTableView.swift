import SQLBuilding

/// One table of the old version, served as a view over one table of the new version: its
/// columns in the old order, names and types, each read from (and written to) what holds its
/// values now. Pure intent; `OldTableView+SQL` writes the view and its trigger.
struct OldTableView: Sendable, Hashable {
    /// The old table's name: the view's.
    var name: String
    /// The new table the view reads; nil when the new version keeps nothing of it (a removed
    /// relationship's join table): the view is empty and writes to it are discarded.
    var base: String?
    var columns: [ViewColumn]
    /// Old columns naming a row (`_pk`, or a join table's pair), for updates and deletes.
    var keys: [String]
    /// The new entities whose rows the old version knows (`_entity IN (…)`); nil: every row.
    var entities: [String]?
    /// Order columns of the new table the old version does not have: links it writes are put
    /// last among their owner's.
    var appendedPositions: [AppendedPosition]
    /// A hierarchy table: `_pk` comes from the base table's identity.
    var hasIdentity: Bool

    /// PostgreSQL can write through the view itself: every column is a new column under its
    /// old name and type, and nothing else is written.
    var isAutoUpdatable: Bool {
        base != nil && appendedPositions.isEmpty && columns.allSatisfy(\.isPlain)
    }
}

/// An old column of a view and where its values are now.
struct ViewColumn: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        /// A new column, perhaps of a wider number type; `required`: made required, NULLs the
        /// old version writes become the new default.
        case column(String, newType: String, required: RequiredDefault?)
        /// `_entity`, with the entities renamed (old name -> new name).
        case entityName(renames: [EntityRename])
        /// Nothing holds it any more: reads give `value` (NULL, or the old default), writes
        /// are discarded.
        case constant(SQL)
        /// A position of a relationship made unordered: counted among the owner's links.
        case position(owner: String, orderBy: String)
        /// A to-one made to-many: the first link in the new join table; writes replace the links.
        case firstLink(JoinLinks)
    }

    var name: String
    var type: String
    /// The old layout's default, given to rows the old version inserts without the column.
    var defaultValue: SQL?
    var source: Source

    var isPlain: Bool {
        switch source {
        case .column(_, let newType, let required): newType == type && required == nil
        case .entityName(let renames): renames.isEmpty
        case .constant, .position, .firstLink: false
        }
    }

    /// The new column written with this column's value, if any.
    var writtenColumn: String? {
        switch source {
        case .column(let column, _, _): column
        case .entityName: "_entity"
        case .constant, .position, .firstLink: nil
        }
    }
}

struct EntityRename: Sendable, Hashable {
    var old: String
    var new: String
}

/// The new default NULLs get, for the rows of `entities` (nil: every row).
struct RequiredDefault: Sendable, Hashable {
    var value: SQL
    var entities: [String]?
}

/// Where a to-one made to-many keeps its links now: `owner` is the old row's side.
struct JoinLinks: Sendable, Hashable {
    var table: String
    var owner: String
    var target: String
    /// The owner side's order column, if the to-many is ordered.
    var order: String?
    /// The other side's order column, if its to-many is ordered: the link goes last there.
    var inverseOrder: String?
}

/// An order column the old version does not know, numbered within `owner` (a new column).
struct AppendedPosition: Sendable, Hashable {
    var column: String
    var owner: String
}
