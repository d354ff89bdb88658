import CLibPQ
import Foundation
import Logging
import SQLBuilding

/// One libpq connection to a PostgreSQL server.
///
/// Not thread-safe: libpq allows one statement at a time per connection, so use a connection from
/// one task or thread at a time. It is `@unchecked Sendable` only so it can be handed from one
/// task to another; callers must not share it concurrently.
public final class PostgresConnection: @unchecked Sendable, CustomStringConvertible {
    /// The connection string with any password replaced by `***`.
    public let target: String
    private var connection: OpaquePointer?
    /// Kept only to open another session to the same server (`reconnect`); never printed.
    let connectionString: ConnectionString
    let defaults: ConnectionDefaults
    /// Set by `bound(lockWaits:)`: looks at statements that wait for a lock.
    var lockWatcher: LockWatcher?
    /// How a statement that waits long is watched (LivenessWatch); nil: never.
    let livenessSettings: LivenessWatch.Settings?
    /// The options of a liveness probe: this connection's, pinned to the server it reached.
    private(set) var probeOptions: [(keyword: String, value: String)] = []
    /// Savepoints open inside `rehearsing(_:)`; nil outside a rehearsal.
    var rehearsalSavepoints: Int?
    /// Where each statement is logged with its duration and row count (`debug` level); nil
    /// logs nothing. Sessions opened by `reconnect()` log to it too.
    public var statementLogger: Logger?
    /// What a caller that keeps this session for many stores (`fleet apply`) learned once about
    /// the server and does not ask again; nil (the default): nothing is kept.
    public var sessionFacts: SessionFacts?
    /// Round trips to the server so far: one per statement run alone, per COPY, and per
    /// pipeline of statements (`StatementPipeline`).
    public internal(set) var roundTrips = 0
    /// The FATAL the server sent when it ended the session on its own, if it did.
    private let endedSession = EndedSession()

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - connectionString: a `postgres://` / `postgresql://` URL or a key=value conninfo string,
    ///     read by libpq (so `sslmode` and the like work). A string whose password cannot be
    ///     located safely is refused without being quoted (`UnreadableConnectionString`'s reason,
    ///     as a connection error). Errors never contain its password.
    ///   - defaults: libpq settings used where neither the string nor libpq's environment
    ///     variables give one.
    public convenience init(url connectionString: String, defaults: ConnectionDefaults = ConnectionDefaults()) throws {
        let parsed: ConnectionString
        do {
            parsed = try ConnectionString(connectionString)
        } catch {
            throw PostgresError(kind: .connection, message: error.description)
        }
        try self.init(parsed, defaults: defaults)
    }

    public init(_ connectionString: ConnectionString, defaults: ConnectionDefaults = ConnectionDefaults()) throws {
        // An empty string connects where libpq's environment (PGHOST, PGSERVICE, …) says.
        target = connectionString.redacted.isEmpty ? "the server of libpq's defaults" : connectionString.redacted
        self.connectionString = connectionString
        self.defaults = defaults
        livenessSettings = defaults.livenessSettings()
        // Exactly the options libpq read from the string, after our defaults: the string wins.
        let options = defaults.options(unlessSetIn: connectionString.options) + connectionString.options
        guard let connection = connectdb(options) else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection to \(target)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = libpqErrorMessage(connection, redacting: connectionString)
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: message)
        }
        // Notices (e.g. "relation already exists, skipping") would otherwise go to stderr.
        endedSession.install(on: connection)
        // Every String we send and read is UTF-8, whatever the database's default.
        guard PQsetClientEncoding(connection, "UTF8") == 0 else {
            let message = libpqErrorMessage(connection, redacting: connectionString)
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: message)
        }
        self.connection = connection
        probeOptions = options + [
            ("host", PQhost(connection).map { String(cString: $0) } ?? ""), ("port", PQport(connection).map { String(cString: $0) } ?? ""),
            ("connect_timeout", String(livenessSettings?.probeTimeout ?? ConnectionDefaults.defaultConnectTimeoutSeconds)),
            ("application_name", "orchestrator liveness probe"),
        ].filter { !$0.1.isEmpty }
    }

    deinit {
        close()
    }

    public var description: String { "PostgresConnection(\(target))" }

    /// A new session to the same server as the same user: for work that must go on beside
    /// this session, such as holding a lock while this one commits.
    public func reconnect() throws -> PostgresConnection {
        let session = try PostgresConnection(connectionString, defaults: defaults)
        session.statementLogger = statementLogger
        if let bound = lockWatcher?.bound { try session.bound(lockWaits: bound) }
        return session
    }

    /// Closes the connection. Using it afterwards is a programming error.
    public func close() {
        lockWatcher?.close()
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// The server version as libpq reports it, e.g. `150004` for 15.4.
    public var serverVersion: Int {
        Int(PQserverVersion(openConnection()))
    }

    /// The server process of this session (`pg_backend_pid()`), known without asking.
    public var backendPID: Int {
        Int(PQbackendPID(openConnection()))
    }

    /// Runs a statement and returns its rows, all values in text format.
    ///
    /// With binds, uses `PQexecParams` with text parameters whose types the server infers. Without
    /// binds, uses `PQexec`, so the text may hold several statements (the last one's result is
    /// returned).
    @discardableResult
    public func execute(_ sql: SQL) throws -> QueryResult {
        let connection = openConnection()
        let watch = lockWatcher?.watch(pid: PQbackendPID(connection))
        defer { watch?.finish() }
        endedSession.readPending(on: connection)
        roundTrips += 1
        return try logging(sql.text, rowCount: \.affectedRows) {
            let result: OpaquePointer? = try watchingLiveness(of: sql.text) {
                if sql.binds.isEmpty { return PQexec(connection, sql.text) }
                return try withParameterValues(of: sql) { values in
                    PQexecParams(connection, sql.text, Int32(values.count), nil, values, nil, nil, 0)
                }
            }
            do {
                return try consumeResult(result, statement: sql.text, kind: .query)
            } catch var error as PostgresError where error.sqlState == .lockNotAvailable {
                error.lockWait = watch?.lastWait
                throw error
            }
        }
    }

    /// Runs `body` between BEGIN and COMMIT; on a thrown error, rolls back and rethrows it.
    ///
    /// Transactions do not nest: calling this inside another transaction is a programming error.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if rehearsalSavepoints != nil { return try savepoint(body) }
        let status = PQtransactionStatus(openConnection())
        precondition(
            status != PQTRANS_INTRANS && status != PQTRANS_INERROR,
            "transaction(_:) called while a transaction is already open on \(self)"
        )
        try execute("BEGIN")
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        // COMMIT of a transaction in which a statement failed succeeds but reports ROLLBACK.
        let commit = try execute("COMMIT")
        guard commit.commandTag != "ROLLBACK" else {
            throw PostgresError(
                kind: .query,
                message: "the transaction was rolled back because a statement in it failed",
                hint: "an error thrown inside transaction(_:) was caught and not rethrown",
                statement: "COMMIT"
            )
        }
        return value
    }

    // MARK: - libpq plumbing shared by the extensions

    /// The open libpq connection; using a closed connection is a programming error.
    func openConnection() -> OpaquePointer {
        guard let connection else { preconditionFailure("\(self) used after close()") }
        return connection
    }

    /// What the server sent while the session sat in a transaction (`EndedSession`).
    func readPendingMessages() {
        endedSession.readPending(on: openConnection())
    }

    /// Turns a finished `PGresult` into rows or a thrown error, and frees it.
    func consumeResult(_ result: OpaquePointer?, statement: String, kind: PostgresError.Kind) throws -> QueryResult {
        let connection = openConnection()
        guard let result else {
            throw endedSession.error(on: connection, kind: kind, statement: statement)
                ?? PostgresError(kind: kind, message: libpqErrorMessage(connection), statement: statement)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return QueryResult(libpqResult: result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            leaveCopyState(status, reason: "COPY is not supported by execute(_:); use copyIn(_:rows:)")
            throw PostgresError(
                kind: .protocol,
                message: "execute(_:) cannot run COPY; use copyIn(_:rows:) for COPY ... FROM STDIN",
                statement: statement
            )
        default:
            throw explainingLostConnection(PostgresError(result: result, connection: connection, kind: kind, statement: statement))
        }
    }

    /// A lost connection reports libpq's own message ("server closed the connection
    /// unexpectedly"), unless the server said why it ended the session (a FATAL message sent
    /// while no statement ran, which libpq keeps in the connection's message): then that.
    func explainingLostConnection(_ error: PostgresError) -> PostgresError {
        let connection = openConnection()
        // libpq's own "server closed the connection" carries no SQLSTATE; the server's FATAL,
        // kept by the notice receiver, does; else the message libpq kept in the connection.
        if error.sqlState == nil, let ended = endedSession.error(on: connection, kind: error.kind, statement: error.statement ?? "") { return ended }
        guard error.sqlState == nil, PQstatus(connection) == CONNECTION_BAD,
              let ending = SessionEnding(connectionMessage: PQerrorMessage(connection).map { String(cString: $0) } ?? "")
        else { return error }
        var explained = error
        explained.adopt(ending)
        return explained
    }

    /// Ends a COPY the server started but we cannot serve, then discards the remaining results.
    func leaveCopyState(_ status: ExecStatusType, reason: String) {
        let connection = openConnection()
        if status == PGRES_COPY_IN {
            _ = PQputCopyEnd(connection, reason)
        } else if status == PGRES_COPY_OUT {
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(connection, &buffer, 0) > 0 {
                PQfreemem(buffer)
            }
        }
        while let pending = PQgetResult(connection) {
            PQclear(pending)
        }
    }

    /// Calls `body` with the binds as C strings (nil for NULL), freeing them afterwards.
    func withParameterValues<R>(of sql: SQL, _ body: ([UnsafePointer<CChar>?]) -> R) throws -> R {
        var values: [UnsafeMutablePointer<CChar>?] = []
        defer { values.forEach { free($0) } }
        for (offset, bind) in sql.binds.enumerated() {
            guard let text = bind.textRepresentation else {
                values.append(nil)
                continue
            }
            guard !text.utf8.contains(0) else {
                throw PostgresError(
                    kind: .query,
                    message: "bind $\(offset + 1) contains a NUL character, which PostgreSQL text cannot hold",
                    statement: sql.text
                )
            }
            values.append(strdup(text))
        }
        return body(values.map { UnsafePointer($0) })
    }
}

/// `PQconnectdbParams` with `options`, in order (a later keyword wins over an earlier one).
func connectdb(_ options: [(keyword: String, value: String)]) -> OpaquePointer? {
    let keywords = options.map { strdup($0.keyword) }
    let values = options.map { strdup($0.value) }
    defer { (keywords + values).forEach { free($0) } }
    return (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keywordPointers in
        (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valuePointers in
            PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 0)
        }
    }
}

/// libpq's current error message on one line, with the connection's secrets removed.
func libpqErrorMessage(_ connection: OpaquePointer, redacting connectionString: ConnectionString? = nil) -> String {
    let raw = PQerrorMessage(connection).map { String(cString: $0) } ?? ""
    let message = singleLine(connectionString?.scrubbing(raw) ?? raw)
    return message.isEmpty ? "libpq reported an error without a message" : message
}
