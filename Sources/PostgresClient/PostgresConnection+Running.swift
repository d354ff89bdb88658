import CLibPQ
import SQLBuilding
import Foundation
import Logging

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
        roundTrips += 1
        return try logging(sql.text, rowCount: { $0 }) {
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

extension PostgresConnection {
    /// Runs `body`, a blocking libpq call running `statement`, under a liveness watch: when the
    /// server stops answering, the call returns early and this throws `ServerStoppedAnswering`.
    func watchingLiveness<T>(of statement: String, _ body: () throws -> T) throws -> T {
        let connection = openConnection()
        guard let settings = livenessSettings,
              let watch = LivenessWatch(socket: PQsocket(connection), settings: settings, probe: { [probeOptions] in serverAnswers(options: probeOptions) })
        else { return try body() }
        let value = Result { try body() }
        watch.finish()
        if watch.didCut {
            let server = probeOptions.last { $0.keyword == "host" }.map { host in
                host.value + (probeOptions.last { $0.keyword == "port" }.map { ":" + $0.value } ?? "")
            } ?? target
            throw ServerStoppedAnswering.error(statement: statement, server: server, waited: watch.waited, settings: settings)
        }
        return try value.get()
    }
}

/// The statement log (`orchestrator --verbose`): each statement a connection runs, with its
/// duration and row count, at `debug` level. Binds are not logged (they are data), and the
/// connection string is never part of a message.
extension PostgresConnection {
    /// Runs `body`, which executes `statement`, and logs it when `statementLogger` is set: after
    /// it finishes (with its rows) or fails (with the error's one-line message).
    func logging<T>(_ statement: String, rowCount: (T) -> Int, _ body: () throws -> T) throws -> T {
        guard let statementLogger else { return try body() }
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> String {
            String(format: "%.1f ms", Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
        }
        do {
            let value = try body()
            let rows = rowCount(value)
            statementLogger.debug("\(elapsed()), \(rows) row\(rows == 1 ? "" : "s"): \(statement)")
            return value
        } catch {
            let reason = (error as? PostgresError).map { singleLine($0.message) } ?? String(describing: error)
            statementLogger.debug("\(elapsed()), failed (\(reason)): \(statement)")
            throw error
        }
    }
}

/// A rehearsal runs work exactly as it would run for real, then undoes all of it: one
/// transaction that is always rolled back, in which every `transaction(_:)` becomes a
/// savepoint (released on success, rolled back to on a thrown error, as a transaction would
/// be). Nothing of it is ever committed.
extension PostgresConnection {
    public var isRehearsing: Bool { rehearsalSavepoints != nil }

    /// Runs `body` inside one transaction and rolls it back, also when `body` returns.
    public func rehearsing<T>(_ body: () throws -> T) throws -> T {
        precondition(!isRehearsing, "rehearsing(_:) called inside a rehearsal on \(self)")
        try execute("BEGIN")
        rehearsalSavepoints = 0
        defer {
            rehearsalSavepoints = nil
            _ = try? execute("ROLLBACK")
        }
        return try body()
    }

    /// `transaction(_:)` inside a rehearsal.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let depth = (rehearsalSavepoints ?? 0) + 1
        rehearsalSavepoints = depth
        defer { rehearsalSavepoints = depth - 1 }
        let name = "orchestrator_rehearsal_\(depth)"
        try execute("SAVEPOINT \(ident: name)")
        do {
            let value = try body()
            try execute("RELEASE SAVEPOINT \(ident: name)")
            return value
        } catch {
            _ = try? execute("ROLLBACK TO SAVEPOINT \(ident: name)")
            _ = try? execute("RELEASE SAVEPOINT \(ident: name)")
            throw error
        }
    }
}
