import ArgumentParser
import Foundation

/// Runs a command body: failures become one line on stderr and exit 1.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch let validation as ValidationError {
        // Usage problems found while running: one line, and the usage exit code.
        printError(validation.message)
        throw ExitCode.validationFailure
    } catch {
        printError(String(describing: error))
        throw ExitCode.failure
    }
}

func printError(_ message: String) {
    let lines = message.split(separator: "\n", omittingEmptySubsequences: true)
    let text = lines.count <= 1 ? "error: \(message)\n" : "error: \(lines.count) problems\n" + lines.map { "  \($0)\n" }.joined()
    FileHandle.standardError.write(Data(TerminalText.escaped(text).utf8))
}

/// A line on stderr that is not an error: the command goes on.
func printNotice(_ message: String) {
    CommandOutput.writeStandardError("note: \(message)\n")
}

/// A problem that does not stop the command, on stderr so that JSON on stdout stays one document.
func printWarning(_ message: String) {
    CommandOutput.writeStandardError("warning: \(message)\n")
}

func printLine(_ text: String = "") {
    CommandOutput.writeStandardOutput(TerminalText.escaped(text) + "\n")
}
