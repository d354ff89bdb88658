import SQLBuilding

// Links copied into a new join table for the owners of some entities only (an entity leaving
// its hierarchy takes its links out of the parent's join table; a parent's many-to-many moved
// down to each sub-entity), under `apply --online`. The mirroring trigger on the links' table
// follows the links written, but an owner whose `_entity` the application changes keeps its
// links where they are: the batches may have passed it. So a second trigger, on the owners'
// table, follows the owner: `AFTER UPDATE OF _entity`, when it becomes one of the entities the
// new join table covers, its links are copied from the links' table (`ON CONFLICT DO NOTHING`);
// when it stops being one, its links leave the new join table. Each new join table filled
// from the same links has its own, so an owner moving between two sub-entities moves its
// links from one to the other. The switch-over drops it with the others.

extension FillJoinTable {
    /// The trigger following owners changing entity, with its install statements; nil where
    /// the links are not chosen by their owner's entity. `values` reads a link's columns from
    /// the links' table, in the order of `columns`.
    func ownerEntityTrigger(in schema: String, columns: [String], values: SQL) -> (trigger: OnlineTrigger, statements: [PlannedStatement])? {
        guard let filter = links.ownerFilter else { return nil }
        let trigger = OnlineTrigger.named("relinked", table: filter.table, column: table)
        let covered: SQL = "(\(literals: filter.entities))"
        let holds = links.requiredNotNull.map { " AND \(ident: $0) IS NOT NULL" as SQL } ?? ""
        let body: SQL = """
            BEGIN
                IF OLD.\(ident: "_entity") IN \(covered) AND (NEW.\(ident: "_entity") NOT IN \(covered) OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk")) THEN
                    DELETE FROM \(ident: schema, table) WHERE \(ident: ownerColumn) = OLD.\(ident: "_pk");
                END IF;
                IF NEW.\(ident: "_entity") IN \(covered) AND (OLD.\(ident: "_entity") NOT IN \(covered) OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk")) THEN
                    INSERT INTO \(ident: schema, table) (\(idents: columns)) SELECT \(values) FROM \(ident: schema, links.table)
                    WHERE \(ident: links.a) = NEW.\(ident: "_pk")\(holds) ON CONFLICT DO NOTHING;
                END IF;
                RETURN NULL;
            END
            """
        let summary = "the links of a row of \(filter.table) turned into \(filter.entities.joined(separator: ", ")) are copied into \(table), those of one turned into another entity leave it"
        return (trigger, trigger.installStatements(in: schema, timing: "AFTER UPDATE OF \(quoteIdentifier("_entity"))", body: body, summary: summary))
    }
}
