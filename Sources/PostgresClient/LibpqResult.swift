import CLibPQ

extension QueryResult {
    /// Copies every value out of a successful `PGresult`; the caller still owns and frees it.
    init(libpqResult result: OpaquePointer) {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column -> String? in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
        self.init(
            columns: columns,
            rows: rows,
            affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0,
            commandTag: String(cString: PQcmdStatus(result))
        )
    }
}

extension PostgresError {
    /// Reads the diagnostic fields of a failed `PGresult`; the caller still owns and frees it.
    init(result: OpaquePointer, connection: OpaquePointer, kind: Kind, statement: String) {
        func field(_ code: DiagnosticField) -> String? {
            PQresultErrorField(result, Int32(code.rawValue.value)).map { String(cString: $0) }
        }
        // libpq-generated failures (e.g. a lost connection) carry no primary message field.
        let fallback = singleLine(PQresultErrorMessage(result).map { String(cString: $0) } ?? "")
        self.init(
            kind: kind,
            message: field(.messagePrimary) ?? (fallback.isEmpty ? libpqErrorMessage(connection) : fallback),
            severity: field(.severityNonLocalized) ?? field(.severity),
            sqlState: field(.sqlState).map { SQLState($0) },
            detail: field(.detail),
            hint: field(.hint),
            position: field(.statementPosition).flatMap { Int($0) },
            schema: field(.schemaName),
            table: field(.tableName),
            column: field(.columnName),
            constraint: field(.constraintName),
            statement: statement
        )
    }
}

/// libpq's `PG_DIAG_*` codes (postgres_ext.h); Swift does not import those character macros.
private enum DiagnosticField: Unicode.Scalar {
    case severity = "S"
    case severityNonLocalized = "V"
    case sqlState = "C"
    case messagePrimary = "M"
    case detail = "D"
    case hint = "H"
    case statementPosition = "P"
    case schemaName = "s"
    case tableName = "t"
    case columnName = "c"
    case constraintName = "n"
}
