import CLibPQ
import Foundation
import SQLBuilding

/// Statements sent together in one round trip with libpq's pipeline mode, and their results
/// read in order: one wait for the network and the server instead of one per statement.
///
/// Each statement is sent as `execute(_:)` sends one with binds (the extended protocol), so
/// each text holds exactly one statement. A statement that fails is thrown as the
/// `PostgresError` `execute(_:)` would throw for it, naming it; the server skips the ones
/// after it (up to the pipeline's end), so nothing after a failure runs. Inside a transaction
/// opened by the pipeline (or before it), a failure leaves the transaction failed: the caller
/// rolls it back, as after any failed statement. Watched as `execute(_:)` is: the statement
/// log (each statement with the time from the pipeline's start), lock waits and liveness; it
/// counts as one of the connection's `roundTrips`.
public enum StatementPipeline {
    /// Runs `statements` in one round trip and returns their results in order.
    @discardableResult
    public static func execute(_ statements: [SQL], on connection: PostgresConnection) throws -> [QueryResult] {
        precondition(!statements.isEmpty, "an empty pipeline on \(connection)")
        let libpq = connection.openConnection()
        let watch = connection.lockWatcher?.watch(pid: PQbackendPID(libpq))
        defer { watch?.finish() }
        connection.readPendingMessages()
        connection.roundTrips += 1
        let started = DispatchTime.now().uptimeNanoseconds
        let outcomes = try connection.watchingLiveness(of: statements.map(\.text).joined(separator: ";\n")) {
            try run(statements, on: connection, libpq: libpq)
        }
        log(statements, outcomes, started: started, on: connection)
        var results: [QueryResult] = []
        for outcome in outcomes {
            switch outcome {
            case .success(let result):
                results.append(result)
            case .failure(var error) where error.sqlState == .lockNotAvailable:
                error.lockWait = watch?.lastWait
                throw error
            case .failure(let error):
                throw error
            }
        }
        return results
    }

    /// 1. Enter pipeline mode and send every statement, then the pipeline's end (a sync).
    /// 2. Read each statement's result: its rows, its error, or "skipped" after a failure.
    /// 3. Read the sync and leave pipeline mode.
    /// Results not read because the connection was lost are that loss's error.
    private static func run(_ statements: [SQL], on connection: PostgresConnection, libpq: OpaquePointer) throws -> [Result<QueryResult, PostgresError>] {
        guard PQenterPipelineMode(libpq) == 1 else {
            throw PostgresError(kind: .protocol, message: "libpq could not enter pipeline mode: \(libpqErrorMessage(libpq))", statement: statements[0].text)
        }
        var sent = 0
        var sendError: PostgresError?
        for sql in statements {
            do {
                let accepted = try connection.withParameterValues(of: sql) { values in
                    PQsendQueryParams(libpq, sql.text, Int32(values.count), nil, values, nil, nil, 0)
                }
                guard accepted == 1 else {
                    sendError = PostgresError(kind: .query, message: libpqErrorMessage(libpq), statement: sql.text)
                    break
                }
                sent += 1
            } catch let error as PostgresError {
                sendError = error
                break
            }
        }
        let synced = PQpipelineSync(libpq) == 1
        var outcomes: [Result<QueryResult, PostgresError>] = []
        var lost: PostgresError?
        for sql in statements.prefix(sent) {
            if let lost {
                outcomes.append(.failure(lost))
                continue
            }
            guard let result = PQgetResult(libpq) else {
                lost = connection.explainingLostConnection(PostgresError(kind: .query, message: libpqErrorMessage(libpq), statement: sql.text))
                outcomes.append(.failure(lost!))
                continue
            }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                outcomes.append(.failure(PostgresError(kind: .query, message: "skipped: an earlier statement of the pipeline failed", statement: sql.text)))
            } else {
                outcomes.append(Result { try connection.consumeResult(result, statement: sql.text, kind: .query) }.mapError { error in
                    error as? PostgresError ?? PostgresError(kind: .query, message: String(describing: error), statement: sql.text)
                })
            }
            // Each statement's results end with a null.
            while let extra = PQgetResult(libpq) { PQclear(extra) }
        }
        if let sendError {
            outcomes.append(.failure(sendError))
        }
        if lost == nil, synced {
            // The sync's own result; a null before it is tolerated once (nothing else is pending).
            var nulls = 0
            while nulls < 2 {
                guard let result = PQgetResult(libpq) else {
                    nulls += 1
                    continue
                }
                let isSync = PQresultStatus(result) == PGRES_PIPELINE_SYNC
                PQclear(result)
                if isSync { break }
            }
        }
        if PQexitPipelineMode(libpq) != 1, lost == nil {
            outcomes.append(.failure(PostgresError(kind: .protocol, message: "libpq could not leave pipeline mode: \(libpqErrorMessage(libpq))", statement: statements[0].text)))
        }
        return outcomes
    }

    /// The statement log, as `execute(_:)` writes it: each statement with the time from the
    /// pipeline's start to its end (the statements of one pipeline show the same time).
    private static func log(_ statements: [SQL], _ outcomes: [Result<QueryResult, PostgresError>], started: UInt64, on connection: PostgresConnection) {
        guard let logger = connection.statementLogger else { return }
        let elapsed = String(format: "%.1f ms", Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
        for (sql, outcome) in zip(statements, outcomes) {
            switch outcome {
            case .success(let result):
                logger.debug("\(elapsed), \(result.affectedRows) row\(result.affectedRows == 1 ? "" : "s"): \(sql.text)")
            case .failure(let error):
                logger.debug("\(elapsed), failed (\(singleLine(error.message))): \(sql.text)")
            }
        }
    }
}
