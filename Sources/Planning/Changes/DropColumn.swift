import SQLBuilding

/// A source column the destination has no place for. Lossy for a removed attribute or
/// relationship; not for a column whose values were copied elsewhere first (a to-one made
/// to-many), nor for an order column of a relationship made unordered.
struct DropColumn: SchemaChange {
    var kind: ChangeKind { .dropColumn(self) }
    var table: String
    var column: String
    var reason: Reason
    /// A removed column holding a foreign key: the table's name after the step's renames, where
    /// `apply --online` drops it in the switch-over rather than first, so that the key's delete
    /// rule (CASCADE, or a denying key) keeps acting on the application's deletes, as the old
    /// version has it, until then. Nil otherwise: where the destination table reuses the
    /// column's name, or the key points at a table the step drops (a removed entity's, dropped
    /// first: the key would hold it).
    var keyedTableAfterRenames: String?

    enum Reason: Sendable {
        case removed
        case moved
        case madeUnordered
    }

    func statements(in schema: String) -> [PlannedStatement] {
        let why = switch reason {
        case .removed: "removed from the model"
        case .moved: "values moved"
        case .madeUnordered: "relationship made unordered"
        }
        return [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) DROP COLUMN \(ident: column)",
            lock: .accessExclusive, summary: "drop column \(table).\(column) (\(why))"
        )]
    }
}

extension DropColumn: OnlineChange {
    /// A column whose values moved is read by the backfill's trigger until the switch-over; a
    /// removed column holding a foreign key is dropped there too, so its delete rule acts on
    /// the application's deletes until then (dropped first, a CASCADE left the linking rows
    /// online that the offline migration of the same writes deletes: HabitRPG 25 -> 26).
    func onlineForm(in schema: String) -> OnlineForm {
        if reason == .moved { return .atSwitchOver(statements(in: schema)) }
        if let table = keyedTableAfterRenames {
            return .atSwitchOver(DropColumn(table: table, column: column, reason: reason).statements(in: schema))
        }
        return .phases([.instant(statements(in: schema))])
    }
}
