import SQLBuilding

extension NewVersionWrites {
    /// The function behind a written view's INSTEAD OF trigger, in the views' schema: the
    /// store's row first (its key kept, or drawn from the store table's sequence), then the
    /// staging row as written, marked as orchestrator's own write (`StagingWriteLog`) for that
    /// statement only. `SECURITY DEFINER`, every name qualified: the writer needs rights on
    /// the view alone. Each write first shares the switch-over's turn
    /// (`NewVersionViews.switchOverTurn`): one that waited there for the switch-over finds the
    /// staging schema gone and writes the store's table, now the new version's, as given.
    func function(for views: NewVersionViews, table: TableLayout) -> SQL? {
        guard let write = written[table.name] else { return nil }
        let old: SQL = "\(ident: views.store, write.oldTable)", staging: SQL = "\(ident: views.staging, table.name)"
        let columns = table.columns.map(\.name)
        let newValues = SQL.joined(columns.map { "NEW.\(ident: $0)" }, separator: ", ")
        let mark = StagingWriteLog.runnerSetting
        func refusal(_ message: String, _ code: String = "feature_not_supported") -> SQL {
            "RAISE EXCEPTION USING ERRCODE = \(literal: code), MESSAGE = \(literal: "store \(views.store): \(message)");"
        }
        var byEntity: [SQL] = []
        for (index, entity) in write.entities.enumerated() {
            let keyword: SQL = index == 0 ? "IF" : "ELSIF"
            let values = SQL.joined(entity.values, separator: ", ")
            let set: SQL = entity.columns.isEmpty ? "NULL;" : """
                UPDATE \(old) AS o SET (\(idents: entity.columns)) = (SELECT \(values) FROM (SELECT NEW.*) AS s) WHERE o._pk = OLD._pk;
                """
            byEntity.append("""
                \(keyword) NEW._entity = \(literal: entity.newEntity) THEN
                    IF TG_OP = 'INSERT' THEN
                        INSERT INTO \(old) (\(idents: ["_pk", "_entity"] + entity.columns))
                        SELECT coalesce(s._pk, nextval(pg_get_serial_sequence(\(literal: quoteIdentifier(views.store) + "." + quoteIdentifier(write.oldTable)), '_pk'))), \
                \(literal: entity.oldEntity)\(unsafeRaw: entity.columns.isEmpty ? "" : ", ")\(values)
                        FROM (SELECT NEW.*) AS s RETURNING _pk INTO k;
                        NEW._pk := k;
                    ELSE
                        \(set)
                    END IF;
                """)
        }
        let entityDefault: SQL = write.onlyEntity.map { "NEW._entity := coalesce(NEW._entity, \(literal: $0));" } ?? ""
        let live: SQL = "\(ident: views.store, table.name)"
        let liveValues = SQL.joined(columns.map { $0 == "_pk" ? "coalesce(s._pk, nextval(pg_get_serial_sequence(\(literal: quoteIdentifier(views.store) + "." + quoteIdentifier(table.name)), '_pk')))" : "s.\(ident: $0)" }, separator: ", ")
        let body: SQL = """
            DECLARE
                runner text := current_setting(\(literal: mark), true);
                k bigint;
            BEGIN
                \(views.switchOverTurn.writerShares)
                IF \(views.switchedOver) THEN
                    -- Switched over while this write waited: the store's table is the new version's.
                    IF TG_OP = 'DELETE' THEN
                        DELETE FROM \(live) WHERE _pk = OLD._pk;
                        RETURN OLD;
                    END IF;
                    \(entityDefault)
                    IF TG_OP = 'INSERT' THEN
                        INSERT INTO \(live) (\(idents: columns)) SELECT \(liveValues) FROM (SELECT NEW.*) AS s RETURNING _pk INTO k;
                        NEW._pk := k;
                    ELSE
                        UPDATE \(live) AS d SET (\(idents: columns)) = ROW(\(newValues)) WHERE d._pk = OLD._pk;
                    END IF;
                    RETURN NEW;
                END IF;
                IF TG_OP = 'DELETE' THEN
                    DELETE FROM \(old) WHERE _pk = OLD._pk;
                    PERFORM set_config(\(literal: mark), \(literal: StagingWriteLog.runnerMark), true);
                    DELETE FROM \(staging) WHERE _pk = OLD._pk;
                    PERFORM set_config(\(literal: mark), coalesce(runner, ''), true);
                    RETURN OLD;
                END IF;
                \(entityDefault)
                IF TG_OP = 'UPDATE' AND (NEW._pk IS DISTINCT FROM OLD._pk OR NEW._entity IS DISTINCT FROM OLD._entity) THEN
                    \(refusal("a row's _pk and _entity cannot change through \"\(views.schema)\".\(table.name)"))
                END IF;
                \(SQL.joined(byEntity, separator: "\n"))
                ELSE
                    \(refusal("\"\(views.schema)\".\(table.name) writes rows of \(write.entities.map(\.newEntity).joined(separator: ", ")), not of the _entity given", "check_violation"))
                END IF;
                PERFORM set_config(\(literal: mark), \(literal: StagingWriteLog.runnerMark), true);
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO \(staging) (\(idents: columns)) VALUES (\(newValues));
                ELSE
                    UPDATE \(staging) AS d SET (\(idents: columns)) = ROW(\(newValues)) WHERE d._pk = OLD._pk;
                END IF;
                PERFORM set_config(\(literal: mark), coalesce(runner, ''), true);
                RETURN NEW;
            END
            """
        return Self.triggerFunction(views, table: table, body: body)
    }

    /// A view's write function: `SECURITY DEFINER` (the writer needs rights on the view alone),
    /// every name in `body` qualified.
    static func triggerFunction(_ views: NewVersionViews, table: TableLayout, body: SQL) -> SQL {
        """
        CREATE FUNCTION \(ident: views.schema, functionName(of: table.name))() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path TO pg_catalog, pg_temp AS \(SQL.dollarQuoted(body, tag: "expand"))
        """
    }

    /// The write function of a view: `_write_<table>`.
    static func functionName(of table: String) -> String { "_write_" + table }
}
