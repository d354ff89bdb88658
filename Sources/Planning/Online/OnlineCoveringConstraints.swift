import SQLBuilding

/// An index or constraint over a column built anew beside the old one (`ColumnRebuild`).
/// `ALTER COLUMN … TYPE` rebuilds it along with the table; `apply --online` builds it on the
/// new columns beside the old ones, under a temporary name, while writes go on:
/// 1. a check, a foreign key, a NOT NULL (as a check) `NOT VALID`, then validated (SHARE
///    UPDATE EXCLUSIVE);
/// 2. an index, a unique index `CONCURRENTLY`;
/// 3. in the swap, the old columns' drop takes the old ones along, and the new ones take their
///    names: indexes renamed, a root entity's uniqueness constraint adopting its index
///    (`ADD CONSTRAINT … UNIQUE USING INDEX`, which renames it), checks and foreign keys
///    renamed, a NOT NULL set (no scan given the valid check) and its check dropped.
enum CoveringConstraint: Sendable, Hashable {
    case index(IndexLayout)
    case unique(UniqueConstraint)
    case check(CheckConstraint)
    case foreignKey(ForeignKey)
    /// A NOT NULL the step adds over a column swapped in at the switch-over.
    case notNull(column: String)

    var name: String {
        switch self {
        case .index(let index): index.name
        case .unique(let unique): unique.name
        case .check(let check): check.name
        case .foreignKey(let key): key.name
        case .notNull(let column): "not_null_" + column
        }
    }

    var columns: [String] {
        switch self {
        case .index(let index): index.columns
        case .unique(let unique): unique.columns
        case .check(let check): check.kind.requiredColumn.map { [$0] } ?? []
        case .foreignKey(let key): [key.column]
        case .notNull(let column): [column]
        }
    }

    /// What covers `column` in the destination `table`: a to-one column's foreign key too
    /// (the old column's drop takes it along).
    static func over(_ column: String, of table: TableLayout) -> [CoveringConstraint] {
        table.indexes.filter { $0.columns.contains(column) }.map(CoveringConstraint.index)
            + table.uniqueConstraints.filter { $0.columns.contains(column) }.map(CoveringConstraint.unique)
            + table.checks.filter { $0.kind.requiredColumn == column }.map(CoveringConstraint.check)
            + table.foreignKeys.filter { $0.column == column }.map(CoveringConstraint.foreignKey)
    }

    /// `orchestrator_online_new_<digest of table and column>`: the column built beside `column`.
    static func shadow(of column: String, on table: String) -> String {
        OnlineTrigger.prefix + "new_" + OnlineTrigger.digest(table + "." + column)
    }

    /// `orchestrator_online_covering_<digest of table and name>`: the same in every plan of the step.
    func temporaryName(on table: String) -> String {
        OnlineTrigger.prefix + "covering_" + OnlineTrigger.digest(table + "." + name)
    }

    /// Built under the temporary name, each column of `shadows` replaced by the new one
    /// beside it, while writes go on.
    func buildPhases(on table: String, shadows: [String: String], in schema: String) -> [OnlinePhase] {
        let temporary = temporaryName(on: table)
        let built = columns.map { shadows[$0] ?? $0 }
        let new = "the new " + columns.filter { shadows[$0] != nil }.map { "\(table).\($0)" }.joined(separator: ", ")
        let notValid = { (definition: SQL, lock: LockLevel, what: String) -> [OnlinePhase] in
            [
                .instant([PlannedStatement(
                    "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: temporary) \(definition) NOT VALID",
                    lock: lock, summary: "\(what) on \(new), for new writes"
                )]),
                validate(temporary, on: table, in: schema),
            ]
        }
        switch self {
        case .check(let check):
            guard case .requiredFor(_, let entities) = check.kind else { preconditionFailure("check \(check.name) covers no column") }
            let expression = CheckConstraint(name: temporary, kind: .requiredFor(column: built[0], entities: entities)).expression
            return notValid("CHECK (\(expression))", .accessExclusive, "check \(check.name)")
        case .foreignKey(let key):
            return notValid(
                "FOREIGN KEY (\(ident: built[0])) REFERENCES \(ident: schema, key.referencedTable) (\(ident: "_pk")) ON DELETE \(unsafeRaw: key.onDelete)",
                .shareRowExclusive, "foreign key \(key.name) -> \(key.referencedTable)"
            )
        case .notNull:
            return notValid("CHECK (\(ident: built[0]) IS NOT NULL)", .accessExclusive, "check IS NOT NULL")
        case .index(let index):
            return [.concurrently(PlannedStatement(
                "CREATE INDEX CONCURRENTLY \(ident: temporary) ON \(ident: schema, table) (\(idents: built))",
                lock: .shareUpdateExclusive, summary: "index \(index.name) on \(new), concurrently"
            ), index: temporary)]
        case .unique(let unique):
            var sql: SQL = "CREATE UNIQUE INDEX CONCURRENTLY \(ident: temporary) ON \(ident: schema, table) (\(idents: built))"
            if let scope = unique.entityScope {
                sql.append(" WHERE \(ident: "_entity") IN (\(literals: scope))")
            }
            return [.concurrently(PlannedStatement(
                sql, lock: .shareUpdateExclusive, summary: "unique index \(unique.name) on \(new), concurrently"
            ), index: temporary)]
        }
    }

    /// In the swap, once the old columns (and with them the old constraint) are dropped and the
    /// new ones renamed.
    func takeNameStatements(on table: String, in schema: String) -> [PlannedStatement] {
        let temporary = temporaryName(on: table)
        switch self {
        case .check, .foreignKey:
            return [PlannedStatement(
                "ALTER TABLE \(ident: schema, table) RENAME CONSTRAINT \(ident: temporary) TO \(ident: name)",
                lock: .accessExclusive, summary: "the new \(self.isCheck ? "check" : "foreign key") takes the name \(name)"
            )]
        case .notNull(let column):
            return [
                PlannedStatement("ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET NOT NULL", lock: .accessExclusive, summary: "make \(table).\(column) NOT NULL (the valid check spares the scan)"),
                PlannedStatement("ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: temporary)", lock: .accessExclusive, summary: "drop the helper check"),
            ]
        case .unique(let unique) where unique.entityScope == nil:
            return [PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: name) UNIQUE USING INDEX \(ident: temporary)",
                lock: .accessExclusive, summary: "unique \(table) (\(unique.columns.joined(separator: ", "))) using the new index"
            )]
        case .index, .unique:
            return [PlannedStatement(
                "ALTER INDEX \(ident: schema, temporary) RENAME TO \(ident: name)",
                lock: .accessExclusive, summary: "the new index takes the name \(name)"
            )]
        }
    }

    private var isCheck: Bool {
        if case .check = self { true } else { false }
    }
}
