import Foundation
import Testing

/// Issue 11.12: shell completion (docs/cli.md, "Shell completion") comes from
/// swift-argument-parser; each shell's script is generated and knows the commands and options.
@Suite("Shell completion")
struct CompletionScriptTests {
    @Test("--generate-completion-script writes a script for bash, zsh and fish that knows every command", arguments: [
        ("bash", "complete -o filenames -F _orchestrator orchestrator"),
        ("zsh", "#compdef orchestrator"),
        ("fish", "complete -c 'orchestrator'"),
    ])
    func script(shell: String, marker: String) throws {
        let result = try OrchestratorBinary.run(["--generate-completion-script", shell])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.contains(marker), "\(shell): \(result.stdout.prefix(400))")
        for word in ["status", "plan", "apply", "infer", "hash", "validate", "diagram", "database-url", "verbose", "quiet", "mermaid"] {
            #expect(result.stdout.contains(word), "\(shell) script lacks \(word)")
        }
    }

    @Test("an unknown shell is a usage error")
    func unknownShell() throws {
        let result = try OrchestratorBinary.run(["--generate-completion-script", "tcsh"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }
}
