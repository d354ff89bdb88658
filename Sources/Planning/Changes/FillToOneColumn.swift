import SQLBuilding

/// A one-to-one whose column changes sides (a rename changed which side sorts first): the new
/// column takes the links the other side's column held.
struct FillToOneColumn: SchemaChange {
    var kind: ChangeKind { .fillToOneColumn(self) }
    var table: String
    var column: String
    /// `a`: rows of `table`.
    var links: SourceLinks

    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = """
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = l.\(ident: links.b) \
            FROM \(ident: schema, links.table) AS l WHERE x.\(ident: "_pk") = l.\(ident: links.a)
            """
        if let required = links.requiredNotNull { sql.append(" AND l.\(ident: required) IS NOT NULL") }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy links from \(links.table) into \(table).\(column)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies every link kept in \(links.table) into \(table).\(column)")]
    }
}

// A one-to-one whose column changes sides, under `apply --online`: the new column (added
// empty by its own change) is filled beside the old one, which stays in use until the
// switch-over drops it:
// 1. a trigger on the old column's table mirrors every link written there into the new column
//    (a link cleared or moved clears the new column where it still names that row);
// 2. batches walk the old column's table, lock the rows they read (`FOR SHARE`, so a link
//    changed meanwhile is copied as committed) and set the new column from them.

extension FillToOneColumn: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        guard let holder = links.requiredNotNull, links.ownerFilter == nil, links.b == "_pk" else {
            return .refused(OnlineRefusal(.onlineUnsupportedLinkSide, "copy links from \(links.table) into \(table).\(column): only a to-one column's links move online (docs/online-migrations.md, Limits)"))
        }
        let trigger = OnlineTrigger.named("side", table: links.table, column: table + "." + column)
        let (a, b) = (links.a, links.b)
        let body: SQL = """
            BEGIN
                IF TG_OP = 'UPDATE' AND OLD.\(ident: a) IS NOT DISTINCT FROM NEW.\(ident: a) AND OLD.\(ident: b) IS NOT DISTINCT FROM NEW.\(ident: b) THEN
                    RETURN NULL;
                END IF;
                IF TG_OP <> 'INSERT' AND OLD.\(ident: holder) IS NOT NULL THEN
                    UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: "_pk") = OLD.\(ident: a) AND \(ident: column) = OLD.\(ident: b);
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.\(ident: holder) IS NOT NULL THEN
                    UPDATE \(ident: schema, table) SET \(ident: column) = NEW.\(ident: b) WHERE \(ident: "_pk") = NEW.\(ident: a);
                END IF;
                RETURN NULL;
            END
            """
        let prefix: SQL = """
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = l.\(ident: b) \
            FROM (SELECT \(idents: [a, b]) FROM \(ident: schema, links.table) WHERE \(ident: holder) IS NOT NULL
            """
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body,
            does: "links written to \(a) are mirrored into \(table).\(column)",
            batches: BatchedStatement(schema: schema, table: links.table, prefix: prefix, suffix: " FOR SHARE) AS l WHERE x.\(ident: "_pk") = l.\(ident: a)").analyzing(table, column: column),
            summary: "copy links from \(links.table) into \(table).\(column), in batches",
            truncate: TruncateFollowing(
                clearing: "UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: column) IS NOT NULL",
                cleared: "the links copied into \(table).\(column)"
            )
        ))
    }
}
