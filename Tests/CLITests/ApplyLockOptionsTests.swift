import Foundation
import Testing

/// `apply` and `fleet apply` share their lock and consent flags (one option group): the same
/// names, defaults, help and checks in both.
@Suite struct ApplyLockOptionsTests {
    static let shared = ["--lock-timeout", "--idle-timeout", "--lock-wait", "--allow-data-loss"]

    /// The help of each shared flag: its line and the indented lines after it.
    static func help(of command: [String]) throws -> [String: String] {
        let result = try OrchestratorBinary.run(command + ["--help"])
        var blocks: [String: String] = [:]
        var current: String?
        for line in result.stdoutLines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let flag = shared.first(where: { trimmed.hasPrefix($0 + " ") || trimmed == $0 }) {
                current = flag
                blocks[flag] = trimmed
            } else if let flag = current, line.hasPrefix("                          ") {
                blocks[flag, default: ""] += " " + trimmed
            } else {
                current = nil
            }
        }
        return blocks
    }

    @Test("the shared flags read the same in apply --help and fleet apply --help")
    func sameHelp() throws {
        let apply = try Self.help(of: ["apply"])
        let fleet = try Self.help(of: ["fleet", "apply"])
        #expect(Set(apply.keys) == Set(Self.shared))
        for flag in Self.shared {
            #expect(apply[flag] == fleet[flag], "\(flag)")
        }
        #expect(fleet["--idle-timeout"]?.contains("(default: 30000)") == true)
    }

    @Test("both commands refuse a bad value of a shared flag with the same message", arguments: [
        (["--idle-timeout", "2"], "--idle-timeout must be a number of milliseconds, 3 or more"),
        (["--lock-timeout", "0"], "--lock-timeout must be a positive number of milliseconds"),
        (["--lock-wait", "inf"], "--lock-wait must be a number of seconds, 0 or more"),
    ])
    func sameChecks(arguments: [String], message: String) throws {
        for command in [["apply", "--model", "migrations"], ["fleet", "apply", "--fleet", "/nonexistent/fleet.yaml"]] {
            let result = try OrchestratorBinary.run(command + arguments)
            #expect(result.exitCode == 64, "\(result)")
            #expect(result.stderr.contains(message), "\(result)")
        }
    }
}
