/// One difference between a store's live catalog and the contract of its recorded version.
public struct DriftItem: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// In the contract, not in the store.
        case missing
        /// In both, with another definition.
        case changed
        /// In the store, unknown to the contract (a DBA's index, a column added by hand).
        case extra
    }

    public enum Object: String, Sendable, Hashable {
        case table, column
        case primaryKey = "primary key"
        case foreignKey = "foreign key"
        case check, index
        /// A view of the previous version's schema while two versions are live (`ViewsDrift`).
        case view
    }

    public var kind: Kind
    public var object: Object
    public var table: String
    /// The column, for a column's drift.
    public var column: String?
    /// The constraint's or index's name, for theirs.
    public var name: String?
    /// The contract's definition; nil when extra.
    public var expected: String?
    /// The store's definition; nil when missing.
    public var found: String?

    public init(kind: Kind, object: Object, table: String, column: String? = nil, name: String? = nil, expected: String?, found: String?) {
        self.kind = kind
        self.object = object
        self.table = table
        self.column = column
        self.name = name
        self.expected = expected
        self.found = found
    }

    /// Missing and changed objects stop `plan` and `apply`; extra ones do not.
    public var isBlocking: Bool { kind != .extra }

    public var description: String {
        var place = table
        if let column { place += ".\(column)" }
        if let name, object != .column, object != .table, object != .view { place = "\(name) on \(table)" }
        let text = "\(kind.rawValue) \(object.rawValue) \(place)"
        switch kind {
        case .missing: return object == .table || object == .view ? text : text + " (expected: \(expected ?? ""))"
        case .changed: return text + ": expected \(expected ?? ""), found \(found ?? "")"
        case .extra: return object == .table || object == .view ? text : text + " (found: \(found ?? ""))"
        }
    }
}

/// Compares a store's live catalog with the contract's. Pure: both sides are values read with
/// the same catalog queries, so no SQL text is parsed here.
public enum StoreDrift {
    /// 1. Tables by name: a contract table absent from the store is missing (its contents are
    ///    not listed again), a store table absent from the contract is extra; a renamed table is
    ///    both.
    /// 2. In each table both have: columns by name (type, nullability, default, identity), the
    ///    primary key, then foreign keys, CHECKs and indexes by definition, whatever their names:
    ///    those left over are paired by their link (foreign keys) or their name as changed, and
    ///    the rest are missing or extra.
    public static func compare(expected: SchemaCatalog, found: SchemaCatalog) -> [DriftItem] {
        var items: [DriftItem] = []
        for table in expected.tables {
            guard let live = found.table(named: table.name) else {
                items.append(DriftItem(kind: .missing, object: .table, table: table.name, expected: "table", found: nil))
                continue
            }
            items += compare(table, live)
        }
        for table in found.tables where expected.table(named: table.name) == nil {
            items.append(DriftItem(kind: .extra, object: .table, table: table.name, expected: nil, found: "table"))
        }
        return items
    }

    static func compare(_ expected: SchemaCatalog.Table, _ found: SchemaCatalog.Table) -> [DriftItem] {
        let table = expected.name
        var items: [DriftItem] = []
        for column in expected.columns {
            guard let live = found.columns.first(where: { $0.name == column.name }) else {
                items.append(DriftItem(kind: .missing, object: .column, table: table, column: column.name, expected: column.description, found: nil))
                continue
            }
            if live != column {
                items.append(DriftItem(kind: .changed, object: .column, table: table, column: column.name, expected: column.description, found: live.description))
            }
        }
        for column in found.columns where !expected.columns.contains(where: { $0.name == column.name }) {
            items.append(DriftItem(kind: .extra, object: .column, table: table, column: column.name, expected: nil, found: column.description))
        }
        if expected.primaryKey != found.primaryKey {
            let describe = { (columns: [String]) in columns.isEmpty ? nil : "(\(columns.joined(separator: ", ")))" }
            let kind: DriftItem.Kind = found.primaryKey.isEmpty ? .missing : expected.primaryKey.isEmpty ? .extra : .changed
            items.append(DriftItem(kind: kind, object: .primaryKey, table: table, expected: describe(expected.primaryKey), found: describe(found.primaryKey)))
        }
        items += pair(expected.foreignKeys, found.foreignKeys, object: .foreignKey, table: table, name: \.name, key: \.link) {
            var unnamed = $0
            unnamed.name = ""
            return unnamed
        }
        items += pair(expected.checks, found.checks, object: .check, table: table, name: \.name, key: \.name) { $0.definition }
        items += pair(expected.indexes, found.indexes, object: .index, table: table, name: \.name, key: \.name) { [$0.isUnique ? "unique" : "", $0.definition] }
        return items
    }

    /// 1. Drop the pairs with the same definition (`definition` leaves the name out).
    /// 2. Pair what is left by `key`: changed.
    /// 3. The contract's rest is missing, the store's extra.
    static func pair<T: CustomStringConvertible, Definition: Hashable>(
        _ expected: [T], _ found: [T], object: DriftItem.Object, table: String, name: (T) -> String, key: (T) -> String,
        definition: (T) -> Definition
    ) -> [DriftItem] {
        var expectedLeft = expected
        var foundLeft = found
        expectedLeft.removeAll { item in
            guard let match = foundLeft.firstIndex(where: { definition($0) == definition(item) }) else { return false }
            foundLeft.remove(at: match)
            return true
        }
        var items: [DriftItem] = []
        for item in expectedLeft {
            if let match = foundLeft.firstIndex(where: { key($0) == key(item) }) {
                items.append(DriftItem(kind: .changed, object: object, table: table, name: name(item), expected: item.description, found: foundLeft[match].description))
                foundLeft.remove(at: match)
            } else {
                items.append(DriftItem(kind: .missing, object: object, table: table, name: name(item), expected: item.description, found: nil))
            }
        }
        for item in foundLeft {
            items.append(DriftItem(kind: .extra, object: object, table: table, name: name(item), expected: nil, found: item.description))
        }
        return items
    }
}
