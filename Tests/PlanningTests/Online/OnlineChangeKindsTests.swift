import Testing
@testable import Planning

/// Every kind of change a lightweight step makes has an online form (`OnlineChange`). The
/// compiler enforces it too (`SchemaChange.onlineForm(in:)` has no default, nor has
/// `SchemaChange.kind`, its case of `ChangeKind`); a change still refused online says why in
/// its own form, with an `OnlineRefusal` code.
@Suite struct OnlineChangeKindsTests {
    static let kinds: [any SchemaChange.Type] = [
        AddCheck.self, AddColumn.self, AddForeignKey.self, AddTable.self, AddUnique.self, AlterColumnType.self, BackfillNulls.self,
        ChangeColumnDefault.self, ClearValues.self, CopyColumnValues.self, CopyRows.self, CreateIndex.self, DataCheck.self,
        DeleteRows.self, DetachReferences.self, DropColumn.self, DropConstraint.self, DropIndex.self, DropNotNull.self,
        DropTables.self, DropUnique.self, FillJoinTable.self, FillOrderColumn.self, FillToOneColumn.self, RenameColumn.self,
        RenameConstraint.self, RenameTable.self, ResetIdentity.self, SetNotNull.self, ShortestFloatText.self, UpdateEntityNames.self,
    ]

    @Test func everyKindOfSchemaChangeHasAnOnlineForm() {
        let without = Self.kinds.filter { !($0 is any OnlineChange.Type) }.map { "\($0)" }
        #expect(without.isEmpty, "no online form: \(without)")
    }
}
