import Foundation
import Testing
import TestSupport

/// Inputs a DBA trying to break orchestrator gave it, each refused (or warned about) with a
/// clear message: saved plans that are not files, too big, or written with a key twice; a
/// store name with a newline; models and mapping models that load but mean something else.
@Suite("hostile files and names")
struct HostileFileTests {
    static let noDatabase = "postgres://nobody@127.0.0.1:1/none"

    /// `apply --plan path`, which reads the file before connecting anywhere.
    static func applyPlan(_ path: String) throws -> CLIResult {
        try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", path], databaseURL: noDatabase)
    }

    static func refusal(_ result: CLIResult, _ path: String) -> String? {
        let prefix = "error: cannot use the saved plan \(path): "
        guard result.exitCode == 1, result.stdout.isEmpty, result.stderr.hasPrefix(prefix) else { return nil }
        return String(result.stderr.dropFirst(prefix.count))
    }

    @Test("--plan on a directory, and on a saved plan over 16 MiB (never read), is refused saying so")
    func planThatIsNoFile() throws {
        try withTemporaryFolder { folder in
            let directory = try Self.applyPlan(folder.path)
            #expect(Self.refusal(directory, folder.path) == "it is a directory, not a file\n", "\(directory)")

            // Sparse: 100 MB that take no room, and that nothing reads.
            let big = folder.appendingPathComponent("big.json")
            try #require(FileManager.default.createFile(atPath: big.path, contents: Data("{".utf8)))
            let handle = try FileHandle(forWritingTo: big)
            try handle.truncate(atOffset: 100_000_000)
            try handle.close()
            let tooBig = try Self.applyPlan(big.path)
            #expect(Self.refusal(tooBig, big.path) == "it is larger than 16 MiB, the most a saved plan may hold; `orchestrator plan --out` writes far smaller ones\n", "\(tooBig)")
        }
    }

    @Test("--plan on a FIFO nobody writes to is refused at once, never waited on")
    func planOnAFIFO() throws {
        try withTemporaryFolder { folder in
            let fifo = folder.appendingPathComponent("plan.fifo")
            try #require(mkfifo(fifo.path, 0o600) == 0)
            let running = try RunningOrchestrator(["apply", "--model", "migrations", "--plan", fifo.path], databaseURL: Self.noDatabase)
            // Bounded: a process still waiting after 60 s is killed and the test fails.
            let deadline = Date().addingTimeInterval(60)
            while running.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if running.isRunning { running.kill() }
            let result = try running.finish()
            #expect(Self.refusal(result, fifo.path) == "it is not a regular file (a FIFO); a saved plan is a file `plan --out` wrote\n", "\(result)")
        }
    }

    @Test("a saved plan with a key written twice is refused naming the key and its line", integration)
    func planWithADuplicateKey() throws {
        try Pipeline.withSavedRecipesPlan { url, file in
            let saved = try String(contentsOfFile: file, encoding: .utf8)
            // The first "store" is what a JSON decoder may keep, the second what `jq` shows.
            let forged = saved.replacingOccurrences(of: "  \"store\" : \"recipes\",", with: "  \"store\" : \"recipes\",\n  \"store\" : \"other\",")
            try #require(forged != saved)
            try forged.write(toFile: file, atomically: true, encoding: .utf8)
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file], databaseURL: url)
            let line = forged.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("\"other\"") }! + 1
            #expect(Self.refusal(apply, file) == "the key 'store' is written twice in one object (line \(line)); `orchestrator plan --out` never does that (run it again)\n", "\(apply)")
            #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores") == "Recipes 1")
        }
    }

    @Test("--store with a newline or another control character is a usage error that does not print it", arguments: ["recipes\nstore recipes: up to date", "tab\there", "bell\u{7}", "line\u{2028}separator"])
    func storeWithControlCharacters(store: String) throws {
        let result = try OrchestratorBinary.run(["status", "--model", "migrations", "--store", store], databaseURL: Self.noDatabase)
        #expect(result.exitCode == 64 && result.stdout.isEmpty, "\(result)")
        #expect(result.stderrLines.first?.hasPrefix("Error: --store must not contain control characters (it holds U+") == true, "\(result)")
        #expect(!result.stderr.contains("up to date"), "\(result)")
    }

    @Test("validate warns about a transient attribute that is required without a default, and loads the model")
    func transientRequired() throws {
        try withTemporaryFolder { folder in
            try write("name: Notes\nversions: [Notes 1]\n", to: "model.yaml", in: folder)
            try write("""
                entities:
                  Note:
                    attributes:
                      title: string
                      draft: {type: boolean, transient: true, optional: false}
                      seen: {type: boolean, transient: true, optional: false, default: false}
                """, to: "Notes 1.yaml", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdoutLines == [
                "warning: \(folder.path)/Notes 1.yaml: entity Note, property draft: transient and non-optional without a default value: the store has no column for it, so only the application can give it the value every save requires (make it optional, or give it a default) [transient-required]",
                "Notes: 1 version(s), current 'Notes 1': valid",
            ], "\(result)")
        }
    }

    @Test("validate refuses a model with a !!python/object tag, naming the file and line")
    func unknownYAMLTag() throws {
        try withTemporaryFolder { folder in
            try write("name: Notes\nversions: [Notes 1]\n", to: "model.yaml", in: folder)
            try write("entities:\n  Note:\n    attributes:\n      title: !!python/object:os.system string\n", to: "Notes 1.yaml", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stdoutLines == [
                "error: \(folder.path)/Notes 1.yaml:4:14: unknown YAML tag '!!python/object:os.system': only the core schema's (str, int, float, bool, null, seq, map) are read",
                "Notes: 1 version(s), current 'Notes 1': 1 problem(s)",
            ], "\(result)")
        }
    }

    @Test("validate refuses a mapping model repeating one entity pair 5,000 times")
    func repeatedEntityMappings() throws {
        try withTemporaryFolder { folder in
            try KitchenModel.write(in: folder)
            let copies = (1...5000).map { "  - {name: Chef\($0), type: copy, source: Chef, destination: Chef}" }.joined(separator: "\n")
            try write("source: Kitchen 1\ndestination: Kitchen 2\nentityMappings:\n\(copies)\n", to: "kitchen-1-to-2.yaml", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stdout.contains("5000 entity mappings (Chef1, Chef2, Chef3 and 4997 more) read Chef into Chef with no filter: each source row would become 5000 rows; keep one, or give each a filter of its own"), "\(result)")
        }
    }
}
