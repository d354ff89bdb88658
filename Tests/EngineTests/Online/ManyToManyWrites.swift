import PostgresClient
import SQLBuilding
import TestSupport

extension TwinWriter {
    /// One side of a many-to-many, as the writer draws it: its table, its column in the join
    /// table, and the keys drawn (rows the batches passed and rows they had not reached).
    struct LinkSide {
        var table: String
        var column: String
        var keys: ClosedRange<Int>
    }

    /// The first version's application writing a many-to-many's join table, in both stores:
    /// links added (three times in seven) and removed (an owner's link to its lowest target),
    /// owners and targets deleted, and rows inserted by `insert`.
    static func writeLinks(in join: String, owner: LinkSide, target: LinkSide, insert: @escaping Write) -> Write {
        { writer, connection in
            let (ownerKey, targetKey) = (writer.random(owner.keys), writer.random(target.keys))
            switch writer.random(0...6) {
            case 0, 1, 2:
                try writer.both({
                    """
                    INSERT INTO \(ident: $0, join) (\(idents: [owner.column, target.column])) SELECT o._pk, t._pk FROM \(ident: $0, owner.table) o, \(ident: $0, target.table) t \
                    WHERE o._pk = \(ownerKey) AND t._pk = \(targetKey) ON CONFLICT DO NOTHING
                    """
                }, on: connection)
            case 3:
                try writer.both({
                    """
                    DELETE FROM \(ident: $0, join) WHERE \(ident: owner.column) = \(ownerKey) \
                    AND \(ident: target.column) = (SELECT min(\(ident: target.column)) FROM \(ident: $0, join) WHERE \(ident: owner.column) = \(ownerKey))
                    """
                }, on: connection)
            case 4:
                try writer.delete(from: owner.table, key: ownerKey, on: connection)
            case 5:
                try insert(writer, connection)
            default:
                try writer.delete(from: target.table, key: targetKey, on: connection)
            }
        }
    }
}
