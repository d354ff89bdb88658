import SQLBuilding

/// A table filled with explicit `_pk`s: its identity continues after the largest, so rows
/// inserted by applications never collide with them.
struct ResetIdentity: SchemaChange {
    var kind: ChangeKind { .resetIdentity(self) }
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

extension ResetIdentity: OnlineChange {
    /// Once no row can arrive through the mirroring trigger any more.
    func onlineForm(in schema: String) -> OnlineForm {
        .atSwitchOver(statements(in: schema))
    }
}
