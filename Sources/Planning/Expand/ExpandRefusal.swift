/// A change the old version's views cannot serve, with a stable code scripts can match on
/// (docs/two-versions.md, "Refusals"), as blockers and online refusals have. The message names
/// the entity (and property) and says why.
public struct ExpandRefusal: Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// An entity with rows is removed and its table cannot be kept until `complete` for a
        /// reason none of the narrower codes below names. (A removed entity whose table is its
        /// own is served from that table, kept until `complete`.)
        case expandEntityRemoved
        /// A removed entity shares its table with entities the new version keeps (single-table
        /// inheritance, or siblings moved out): the step deletes its rows from that table.
        case expandRemovedEntitySharesTable
        /// A removed entity's table name is taken by a table of the new version: it cannot be
        /// kept beside it until `complete`.
        case expandRemovedTableTaken
        /// A removed entity's to-one denies deleting the row it links to (Deny, No Action): kept,
        /// its key would stop the new version deleting rows it no longer links to.
        case expandRemovedLinkDenies
        /// An entity's rows move to another table (out of its hierarchy).
        case expandRowsMoved
        /// A number type change some values would not survive: a value the old version
        /// writes may not fit the new column.
        case expandLossyTypeChange
        /// A required attribute or to-one is removed, and the old version would read NULL in it.
        case expandRemovedRequired
        /// A required to-one is added, or a to-one made required: the old version's writes
        /// cannot give it a value.
        case expandRequiredLink
        /// A column siblings shared is split apart, or columns are merged: one old column
        /// reads several new ones, depending on the row's entity.
        case expandColumnsRegrouped
        /// A relationship's links are kept somewhere the views cannot translate (a one-to-one
        /// whose column changes sides, a join table split between sub-entities, …).
        case expandLinksMoved
        /// A uniqueness constraint is added: enforced at once, the old version's writes may
        /// break it.
        case expandUniqueAdded
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "[\(code.rawValue)] \(message)" }
}

/// The old version cannot be served beside the new one: every refusal, in the order found.
public struct ExpandRefused: Error, Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var destination: String
    public var refusals: [ExpandRefusal]

    public var description: String {
        "'\(source)' cannot be served beside '\(destination)': \(refusals.map(\.description).joined(separator: "; "))"
    }
}
