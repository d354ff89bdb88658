/// Names PostgreSQL picks by itself: the primary key's `<table>_pkey` and the identity
/// sequence's `<table>_<column>_seq`. A renamed table gets them renamed too, so a migrated store
/// looks exactly like one created at the destination version.
enum ImplicitNames {
    static func primaryKey(table: String) -> String {
        objectName(table, nil, label: "pkey")
    }

    static func identitySequence(table: String, column: String) -> String {
        objectName(table, column, label: "seq")
    }

    /// PostgreSQL's `makeObjectName`: `name1[_name2]_label`, the longer of the two names clipped
    /// a byte at a time until the whole fits in 63 bytes. Store names are ASCII.
    static func objectName(_ name1: String, _ name2: String?, label: String) -> String {
        var overhead = label.utf8.count + 1
        if name2 != nil { overhead += 1 }
        let available = 63 - overhead
        var name1Bytes = name1.utf8.count
        var name2Bytes = name2?.utf8.count ?? 0
        while name1Bytes + name2Bytes > available {
            if name1Bytes > name2Bytes { name1Bytes -= 1 } else { name2Bytes -= 1 }
        }
        var result = String(decoding: name1.utf8.prefix(name1Bytes), as: UTF8.self)
        if let name2 { result += "_" + String(decoding: name2.utf8.prefix(name2Bytes), as: UTF8.self) }
        return result + "_" + label
    }
}
