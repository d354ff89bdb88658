import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Versions that differ only in fetch indexes share a model hash (Core Data leaves indexes out
/// of `versionHash`; threema's ThreemaDataV35 and V36 are such a pair). The store's recorded
/// version tells them apart: a store made at the earlier one gets the later one's indexes by a
/// step, and one made at the later one is never taken for the earlier one (whose step to the
/// later one would build an index the store already has: 42P07).
@Suite("Versions differing only in fetch indexes")
struct IndexOnlyVersionTests {
    static let versions = [
        "Notes 1": "entities:\n  Note:\n    attributes:\n      title: string\n      body: string\n",
        "Notes 2": "entities:\n  Note:\n    attributes:\n      title: string\n      body: string\n    indexes:\n      byTitle: [title]\n",
        "Notes 3": "entities:\n  Note:\n    attributes:\n      title: string\n      body: string\n      pinned: bool\n    indexes:\n      byTitle: [title]\n",
    ]

    /// A folder with the Notes model (current: Notes 2), removed afterwards.
    static func withModel(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notes-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = "name: Notes\nversions:\n  - Notes 1\n  - Notes 2\n  - Notes 3\ncurrent: Notes 2\n"
        try Data(model.utf8).write(to: folder.appendingPathComponent("model.yaml"))
        for (name, text) in versions { try Data(text.utf8).write(to: folder.appendingPathComponent(name + ".yaml")) }
        try body(folder.path)
    }

    @Test("a store made at the earlier version gets the indexes by a step; one made at the later is at the later", integration)
    func recordedVersionDecides() throws {
        try Self.withModel { model in
            try TestDatabase.withFreshDatabase { url in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                #expect(try OrchestratorBinary.run(["apply", "--model", model, "--store", "early", "--to", "Notes 1"], databaseURL: url).exitCode == 0)
                #expect(try OrchestratorBinary.run(["apply", "--model", model, "--store", "late"], databaseURL: url).exitCode == 0)
                for store in ["early", "late"] {
                    try connection.execute("INSERT INTO \(ident: store, "note") (_entity, title, body) SELECT 'Note', 'title ' || n, 'body ' || n FROM generate_series(1, 25) AS n")
                }
                func hasIndex(_ store: String) throws -> Bool {
                    try connection.execute("SELECT count(*) AS n FROM pg_indexes WHERE schemaname = \(store) AND indexname = 'note_by_title_idx'").int(0, "n") == 1
                }
                #expect(try !hasIndex("early"))
                #expect(try hasIndex("late"))

                let early = try OrchestratorBinary.run(["status", "--model", model, "--store", "early", "--check"], databaseURL: url)
                #expect(early.exitCode == 2, "\(early)")
                #expect(early.stdout.contains("store early: at 'Notes 1'"), "\(early)")
                #expect(early.stdout.contains("compatible: yes (same model hash), but its indexes are those of 'Notes 1', not 'Notes 2'"), "\(early)")
                let earlyJSON = try OrchestratorBinary.run(["status", "--model", model, "--store", "early", "--format", "json"], databaseURL: url)
                #expect(earlyJSON.stdout.contains("\"indexesDiffer\":true") || earlyJSON.stdout.contains("\"indexesDiffer\": true"), "\(earlyJSON)")
                let late = try OrchestratorBinary.run(["status", "--model", model, "--store", "late", "--check"], databaseURL: url)
                #expect(late.exitCode == 0, "\(late)")
                #expect(late.stdout.contains("store late: at 'Notes 2'"), "\(late)")
                #expect(!late.stdout.contains("indexes"), "\(late)")

                let plan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "early"], databaseURL: url)
                #expect(plan.stdout.contains("step 1 of 1: lightweight 'Notes 1' -> 'Notes 2'"), "\(plan)")
                #expect(plan.stdout.contains("CREATE INDEX \"note_by_title_idx\" ON \"early\".\"note\""), "\(plan)")
                let upToDate = try OrchestratorBinary.run(["plan", "--model", model, "--store", "late"], databaseURL: url)
                #expect(upToDate.stdout.contains("up to date at 'Notes 2'"), "\(upToDate)")

                let apply = try OrchestratorBinary.run(["apply", "--model", model, "--store", "early"], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(try hasIndex("early"))
                #expect(try OrchestratorBinary.run(["status", "--model", model, "--store", "early", "--check"], databaseURL: url).exitCode == 0)

                // Made at Notes 2: the step to Notes 3 starts there, and builds no index twice.
                let onward = try OrchestratorBinary.run(["apply", "--model", model, "--store", "late", "--to", "Notes 3"], databaseURL: url)
                #expect(onward.exitCode == 0, "\(onward)")
                let versions = try connection.execute("SELECT store, version_name FROM orchestrator.stores ORDER BY store")
                #expect(versions.rows == [["early", "Notes 2"], ["late", "Notes 3"]])
                for store in ["early", "late"] {
                    let rows = try connection.execute("SELECT count(*) AS n, count(DISTINCT title) AS titles FROM \(ident: store, "note")")
                    #expect(rows.rows == [["25", "25"]], "\(store)")
                }
                #expect(try hasIndex("late"))
            }
        }
    }
}
