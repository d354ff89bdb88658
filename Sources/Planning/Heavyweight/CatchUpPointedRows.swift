import ObjectModel
import SQLBuilding

/// A to-one path step kept in the other row's column (a one-to-one owned by the other side:
/// `$source.card.title` where `card.recipe_pk` holds the pair) can stop leading to a row
/// without writing it: a card re-pointed from recipe A1 to A2, or deleted, writes only the
/// card, yet A1 read it. So the table holding such a column gets a second row trigger
/// (`OnlineCatchUp.pointedTrigger`) logging, in the row change log, the key the column held
/// before — as a key of the table it references — when the column changes or the row goes.
/// A1 then joins the round as any row written meanwhile; where the column points after is
/// found through the path already (the card's own key is logged, and `CatchUpKeyPaths` adds
/// the rows leading to it). Nothing is logged for an insert or for an update leaving the
/// column as it was: the path finds those rows too.
struct CatchUpPointedRows {
    /// A column of the old store keeping a one-to-one that entity mappings read from the other side.
    struct Pointer: Hashable, Comparable {
        var table: String
        var column: String
        var referencedTable: String

        static func < (lhs: Pointer, rhs: Pointer) -> Bool {
            (lhs.table, lhs.column) < (rhs.table, rhs.column)
        }
    }

    var schemas: HeavyweightSchemas

    /// Every such column `mappings` read through, each once, by table and column.
    func pointers(_ mappings: [ResolvedEntityMapping]) -> [Pointer] {
        let paths = CatchUpKeyPaths(schemas: schemas, keys: CatchUpKeys(staging: schemas.staging))
        let source = schemas.source
        let columns = source.propertyColumns
        var found: Set<Pointer> = []
        for mapping in mappings {
            let joins = paths.joins(of: mapping)
            for path in joins.paths {
                guard let (relationship, declaring, target) = joins.step(path),
                      StoreLayout.storage(of: relationship, in: declaring, version: source) == .inverseColumn,
                      let inverse = source.inverse(of: relationship) else { continue }
                let column = columns.column(ofProperty: inverse.name, of: target, in: source) ?? StoreNaming.foreignKeyColumnName(relationship: inverse.name)
                found.insert(Pointer(
                    table: StoreNaming.tableName(entity: source.root(of: target).name), column: column,
                    referencedTable: StoreNaming.tableName(entity: source.root(of: declaring).name)
                ))
            }
        }
        return found.sorted()
    }

    /// One trigger per table holding such columns, on an update of one of them or a delete;
    /// its arguments are pairs of the referenced table and the column. Before it, the statement
    /// trigger logging the same keys for a `TRUNCATE` (`CatchUpTruncates`).
    func triggers(_ pointers: [Pointer]) -> [PlannedStatement] {
        let byTable = Dictionary(grouping: pointers, by: \.table)
        return byTable.keys.sorted().flatMap { table in
            let held = byTable[table]!
            let arguments = held.flatMap { [$0.referencedTable, $0.column] }
            let described = held.map { "\(schemas.store).\(table).\($0.column)" }.joined(separator: ", ")
            return [CatchUpTruncates.install(CatchUpTruncates.pointedTrigger, table: table, store: schemas.store, staging: schemas.staging, arguments: "\(literals: arguments)"), PlannedStatement("""
                CREATE TRIGGER \(ident: OnlineCatchUp.pointedTrigger) AFTER UPDATE OF \(idents: held.map(\.column)) OR DELETE ON \(ident: schemas.store, table) FOR EACH ROW EXECUTE FUNCTION \(ident: schemas.staging, OnlineCatchUp.function)(\(literals: arguments))
                """, lock: .shareRowExclusive, summary: "log the keys of the rows \(described) pointed at before an update or a delete, until the swap")]
        }
    }
}
