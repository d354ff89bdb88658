import SQLBuilding

// Values copied between the columns siblings share (docs/store-format.md), under `apply
// --online`, by the backfill's pattern. BEFORE triggers fire in the order of their names: the
// copy's (`…_values_…`) after the entity renames' (`…_entity_…`), so that `_entity` reads as
// the destination names the copy uses, as in the offline step. The column copied from keeps
// its values until the switch-over (a column whose values all moved is dropped there), so the
// trigger copies from what the application wrote, whatever the row's history.

extension CopyColumnValues: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let body: SQL = """
            BEGIN IF NEW.\(ident: "_entity") IN (\(literals: entities)) \
            THEN NEW.\(ident: column) := NEW.\(ident: from)::\(unsafeRaw: type); END IF; RETURN NEW; END
            """
        let offline = statements(in: schema)[0]
        return OnlineTrigger.named("values", table: table, column: column).keepingRowsRight(
            on: table, body: body, does: "\(from) copied into \(column) (rows of \(entities.joined(separator: ", ")))",
            batch: offline.sql, summary: offline.summary, in: schema
        )
    }
}
