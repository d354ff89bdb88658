import Foundation
import Logging

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
