import SQLBuilding

/// Rows that leave a kept table: those of removed entities (lossy), or those of an entity moved
/// out of the hierarchy, once they were copied to their new table; the links of other rows to
/// those are cleared first (`MovedLinks`).
struct DeleteRows: SchemaChange {
    var table: String
    /// Names as the rows hold them at that point of the step.
    var entities: [String]
    var isLossy: Bool
    /// Moved rows leaving: the table as the destination keeps it, and the foreign keys of the
    /// destination that point at it (`apply --online` builds it anew beside the old one).
    var staying: (layout: TableLayout, referencing: [(table: TableLayout, key: ForeignKey)])?
    /// The links to moved rows that `plan` names nowhere else (`LightweightDiff.lostLinks`).
    var lostLinks: [Hazard] = []

    func statements(in schema: String) -> [PlannedStatement] {
        clearings.flatMap { $0.statements(in: schema) } + [deletion(in: schema)]
    }

    func deletion(in schema: String) -> PlannedStatement {
        let why = isLossy ? "entities removed from the model" : "rows moved to their own table"
        return PlannedStatement(
            "DELETE FROM \(ident: schema, table) WHERE \(ident: "_entity") IN (\(literals: entities))",
            lock: .rowExclusive, summary: "delete rows of \(entities.joined(separator: ", ")) from \(table) (\(why))"
        )
    }

    var hazards: [Hazard] { lostLinks }
}

/// The rows of entities moved out of their hierarchy, copied into the table of their new
/// hierarchy with their `_pk`; `_entity` takes the destination names.
struct CopyRows: SchemaChange {
    var fromTable: String
    var toTable: String
    /// Destination column -> source column, `_pk` first; `_entity` is derived from `renames`.
    var columns: [(destination: String, source: String)]
    /// Source entity name -> destination name, for every entity moved.
    var entities: [(from: String, to: String)]

    func statements(in schema: String) -> [PlannedStatement] {
        let sql: SQL = """
            INSERT INTO \(ident: schema, toTable) (\(idents: columns.map(\.destination) + ["_entity"])) \
            SELECT \(idents: columns.map(\.source)), \(UpdateEntityNames.renamed(entities)) \
            FROM \(ident: schema, fromTable) WHERE \(ident: "_entity") IN (\(literals: entities.map(\.from)))
            """
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy rows of \(entities.map(\.from).joined(separator: ", ")) from \(fromTable) to \(toTable)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies the rows of \(entities.map(\.from).joined(separator: ", ")) from \(fromTable) to \(toTable)")]
    }
}

/// A table filled with explicit `_pk`s: its identity continues after the largest, so rows
/// inserted by applications never collide with them.
struct ResetIdentity: SchemaChange {
    var table: String

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            """
            SELECT setval(pg_get_serial_sequence(\(nameLiteral: schema, table), \(literal: "_pk")), \
            COALESCE((SELECT max(\(ident: "_pk")) FROM \(ident: schema, table)), 0) + 1, false)
            """,
            lock: .accessShare, summary: "continue the identity of \(table) after its largest _pk"
        )]
    }
}
