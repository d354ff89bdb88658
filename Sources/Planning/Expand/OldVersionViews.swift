import ObjectModel
import SQLBuilding

/// The old version of a store, served through views over the new version's tables: one schema
/// (`schemaName(store:version:)`) holding one view per table of the old layout, under the old
/// names, columns and types. Reads show the rows as the old version would; writes land in the
/// new tables in the new shape (docs/two-versions.md). Generated from the two versions and the
/// inferred mapping alone; pure.
public struct OldVersionViews: Sendable, Hashable {
    /// The store (the new tables' schema) and the old version's name.
    public var store: String
    public var version: String
    /// The schema of the views.
    public var schema: String
    var views: [OldTableView]

    /// The views for `mapping` (source -> destination), or every change they cannot serve.
    /// `keptColumns` (`"table.column"`, new table names): removed columns whose drop waits for
    /// `complete` (`ExpandDeferral`), which the views read and write rather than a constant;
    /// `keptTables` (old names): dropped tables waiting for `complete` likewise, which serve a
    /// removed entity (or a removed many-to-many) to the old version as they are.
    public init(
        mapping: InferredMapping, from source: ModelVersion, to destination: ModelVersion, store: String,
        keptColumns: Set<String> = [], keptTables: Set<String> = []
    ) throws(ExpandRefused) {
        let pairing = LayoutPairing(mapping: mapping, source: source, destination: destination, schema: store)
        let resolver = ViewResolver(pairing: pairing, keptColumns: keptColumns, keptTables: keptTables)
        guard resolver.refusals.isEmpty else {
            throw ExpandRefused(source: source.name, destination: destination.name, refusals: resolver.refusals)
        }
        self.store = store
        self.version = source.name
        self.schema = Self.schemaName(store: store, version: source.name)
        self.views = resolver.views
    }

    /// `<store>@<version>`, the version's characters other than ASCII letters, digits, `_`,
    /// `.` and `-` replaced by `_`, shortened as store names are past 63 bytes. Always quoted:
    /// `SET search_path = "shop@v1"`.
    public static func schemaName(store: String, version: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
        return StoreNaming.shortened(store + "@" + String(version.map { allowed.contains($0) ? $0 : "_" }))
    }

    /// The views' names, in the old layout's table order.
    public var viewNames: [String] { views.map(\.name) }

    /// The views PostgreSQL writes through itself; the others have an INSTEAD OF trigger.
    public var autoUpdatableViews: [String] { views.filter(\.isAutoUpdatable).map(\.name) }

    /// Creates the schema and its views, defaults and triggers; one transaction is enough (DDL
    /// on new objects only, no lock on the store's tables beyond ACCESS SHARE while a view is
    /// created).
    public var statements: [SQL] {
        var statements: [SQL] = [
            "CREATE SCHEMA \(ident: schema)",
            "COMMENT ON SCHEMA \(ident: schema) IS \(literal: "orchestrator: version \(version) of store \(store), served through views")",
        ]
        for view in views {
            statements += view.statements(viewSchema: schema, storeSchema: store)
        }
        return statements
    }
}
