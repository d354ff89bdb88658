/// The closed set of changes a step is planned from, each case carrying its value: what a
/// change is, read by a `switch`, never by a type test (`as?`, `is`). Every `switch` over it
/// names every case (no `default:`), so a new kind of change does not compile until each place
/// that orders or rewrites changes has decided what to do with it: its place in the online
/// order (`OnlineOrder`), whether it adds what a rebuilt column must cover
/// (`CoveringConstraint.resolving`), whether a shadow table can take over beside it
/// (`ShadowTable.takesOver`).
enum ChangeKind {
    // The changes `LightweightDiff` plans, one file each in Planning/Changes.
    case addCheck(AddCheck)
    case addColumn(AddColumn)
    case addForeignKey(AddForeignKey)
    case addTable(AddTable)
    case addUnique(AddUnique)
    case alterColumnType(AlterColumnType)
    case backfillNulls(BackfillNulls)
    case changeColumnDefault(ChangeColumnDefault)
    case clearValues(ClearValues)
    case copyColumnValues(CopyColumnValues)
    case copyRows(CopyRows)
    case createIndex(CreateIndex)
    case dataCheck(DataCheck)
    case deleteRows(DeleteRows)
    case detachReferences(DetachReferences)
    case dropColumn(DropColumn)
    case dropConstraint(DropConstraint)
    case dropIndex(DropIndex)
    case dropNotNull(DropNotNull)
    case dropTables(DropTables)
    case dropUnique(DropUnique)
    case fillJoinTable(FillJoinTable)
    case fillOrderColumn(FillOrderColumn)
    case fillToOneColumn(FillToOneColumn)
    case renameColumn(RenameColumn)
    case renameConstraint(RenameConstraint)
    case renameTable(RenameTable)
    case resetIdentity(ResetIdentity)
    case setNotNull(SetNotNull)
    case shortestFloatText(ShortestFloatText)
    case updateEntityNames(UpdateEntityNames)
    // What `apply --online` puts in the place of some of them (Planning/Online).
    case atSwitchOver(AtSwitchOver)
    case foreignKeyBeside(ForeignKeyBeside)
    case shadowTable(ShadowTable)
    case rebuildBesideOthers(RebuildBesideOthers)
    case jointSwap(JointSwap)
    case builtOnRebuilt(BuiltOnRebuilt)
}

extension ChangeKind {
    /// The setting the conversions that read floating-point numbers as text need: one per step.
    var isShortestFloatText: Bool {
        guard case .shortestFloatText = self else { return false }
        return true
    }
}
