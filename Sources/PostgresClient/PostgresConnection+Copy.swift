import CLibPQ
import SQLBuilding

/// `COPY ... FROM STDIN` in text format.
extension PostgresConnection {
    /// Bytes buffered before each `PQputCopyData` call.
    static let copyChunkSize = 64 * 1024

    /// Streams rows into a `COPY ... FROM STDIN` statement and returns how many were copied.
    ///
    /// Each row is one line of COPY text format: fields are escaped (backslash, tab, newline and
    /// carriage return) and nil becomes `\N`. The statement must not use `FORMAT csv` or `binary`,
    /// and cannot take binds (COPY does not accept parameters).
    @discardableResult
    public func copyIn(_ sql: SQL, rows: some Sequence<[String?]>) throws -> Int {
        try logging(sql.text, rowCount: { $0 }) {
            do {
                return try watchingLiveness(of: sql.text) { try copyInRows(sql, rows: rows) }
            } catch let error as PostgresError {
                throw explainingLostConnection(error)
            }
        }
    }

    private func copyInRows(_ sql: SQL, rows: some Sequence<[String?]>) throws -> Int {
        precondition(sql.binds.isEmpty, "COPY cannot take bind parameters: \(sql.text)")
        let connection = openConnection()

        // 1. Start the COPY; anything but COPY_IN is an error or the wrong kind of statement.
        guard let start = PQexec(connection, sql.text) else {
            throw PostgresError(kind: .copy, message: libpqErrorMessage(connection), statement: sql.text)
        }
        let status = PQresultStatus(start)
        guard status == PGRES_COPY_IN else {
            defer { PQclear(start) }
            if status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE {
                throw PostgresError(result: start, connection: connection, kind: .copy, statement: sql.text)
            }
            leaveCopyState(status, reason: "copyIn(_:rows:) expects COPY ... FROM STDIN")
            throw PostgresError(
                kind: .protocol,
                message: "copyIn(_:rows:) expects COPY ... FROM STDIN, but the statement did not start one",
                statement: sql.text
            )
        }
        PQclear(start)

        // 2. Send the rows in chunks, then end the COPY.
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.copyChunkSize + 4096)
        var isSent = true
        for row in rows {
            appendCopyLine(row, to: &buffer)
            if buffer.count >= Self.copyChunkSize {
                isSent = putCopyData(buffer, on: connection)
                guard isSent else { break }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if isSent, !buffer.isEmpty { isSent = putCopyData(buffer, on: connection) }
        if isSent { isSent = PQputCopyEnd(connection, nil) == 1 }
        let sendFailure = isSent ? nil : libpqErrorMessage(connection)

        // 3. Read the outcome; the first result says how many rows the server stored.
        var outcome: Result<Int, PostgresError>?
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            guard outcome == nil else { continue }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                outcome = .success(Int(String(cString: PQcmdTuples(result))) ?? 0)
            } else {
                outcome = .failure(PostgresError(result: result, connection: connection, kind: .copy, statement: sql.text))
            }
        }
        switch (outcome, sendFailure) {
        case (.failure(let error)?, _):
            throw error
        case (_, let message?):
            throw PostgresError(kind: .copy, message: message, statement: sql.text)
        case (.success(let count)?, nil):
            return count
        case (nil, nil):
            throw PostgresError(kind: .copy, message: libpqErrorMessage(connection), statement: sql.text)
        }
    }

    private func putCopyData(_ bytes: [UInt8], on connection: OpaquePointer) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                PQputCopyData(connection, chars.baseAddress, Int32(chars.count)) == 1
            }
        }
    }
}

/// Appends one row as a line of COPY text format.
func appendCopyLine(_ row: [String?], to buffer: inout [UInt8]) {
    let backslash = UInt8(ascii: "\\")
    for (index, field) in row.enumerated() {
        if index > 0 { buffer.append(UInt8(ascii: "\t")) }
        guard var field else {
            buffer.append(backslash)
            buffer.append(UInt8(ascii: "N"))
            continue
        }
        // Most fields need no escape: copied in one go from the string's UTF-8.
        let copied = field.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 == backslash || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
                return false
            }
            buffer.append(contentsOf: bytes)
            return true
        }
        if copied { continue }
        for byte in field.utf8 {
            switch byte {
            case backslash, UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                buffer.append(backslash)
                buffer.append(byte == backslash ? backslash : byte == UInt8(ascii: "\t") ? UInt8(ascii: "t") : byte == UInt8(ascii: "\n") ? UInt8(ascii: "n") : UInt8(ascii: "r"))
            default:
                buffer.append(byte)
            }
        }
    }
    buffer.append(UInt8(ascii: "\n"))
}
