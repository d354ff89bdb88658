import Foundation
import PostgresClient
import Testing
import TestSupport

/// `apply` reports progress as it runs and ends naming the schema a heavyweight step kept.
@Suite("apply progress and backup schema")
struct ApplyProgressTests {
    /// Kitchen 1 -> 2 by the mapping model (heavyweight), 2 -> 3 by adding an attribute
    /// (lightweight): a two-step plan. The mapping's filter leaves rows out, so `apply` runs it
    /// with --allow-data-loss.
    static func writeThreeVersions(in folder: URL) throws {
        try ValidateMappingTests.writeModel(in: folder, mapping: ValidateMappingTests.mapping)
        try write("name: Kitchen\nversions: [Kitchen 1, Kitchen 2, Kitchen 3]\n", to: "model.yaml", in: folder)
        try write(
            "entities:\n  Recipe:\n    attributes:\n      temperatureC: double\n      totalCost: int64\n      note: string\n",
            to: "Kitchen 3.yaml", in: folder
        )
    }

    @Test("apply --format json prints a JSON line per event before the final document, with the step numbers", integration)
    func jsonProgressLinesComeFirst() throws {
        try withAppliedStore(model: Self.writeThreeVersions) { folder, url, connection in
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--format", "json", "--allow-data-loss"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stderr.isEmpty, "\(apply)")
            let objects = try apply.stdoutLines.map(jsonObject)
            let document = try #require(objects.last, "\(apply)")
            #expect(document["event"] == nil, "the final document is the last line: \(apply)")
            #expect(document["version"] as? String == "Kitchen 3", "\(apply)")
            let kinds = (document["steps"] as? [[String: Any]])?.map { $0["kind"] as? String }
            #expect(kinds == ["heavyweight", "lightweight"], "\(apply)")
            #expect(document["backupSchema"] as? String == "kitchen~", "\(apply)")

            let progress = objects.dropLast()
            #expect(progress.allSatisfy { $0["event"] is String && $0["stepCount"] as? Int == 2 }, "\(apply)")
            let stepEvents = progress.compactMap { line -> String? in
                guard let event = line["event"] as? String, event.hasPrefix("step") else { return nil }
                return "\(event) \(line["step"] as? Int ?? 0) \(line["stepKind"] as? String ?? "?")"
            }
            #expect(stepEvents == [
                "stepStarted 1 heavyweight", "stepFinished 1 heavyweight", "stepStarted 2 lightweight", "stepFinished 2 lightweight",
            ], "\(apply)")
            let first = try #require(progress.first, "\(apply)")
            #expect(first["from"] as? String == "Kitchen 1", "\(apply)")
            #expect(first["to"] as? String == "Kitchen 2", "\(apply)")

            #expect(try schemaExists("kitchen~", on: connection))
        }
    }

    @Test("apply in text, not on a terminal, prints a plain line when a step is done, on stdout", integration)
    func plainLinesInText() throws {
        try TestDatabase.withFreshDatabase { url in
            let create = try OrchestratorBinary.run(["apply", "--model", "migrations", "--to", "Recipes 1"], databaseURL: url)
            #expect(create.exitCode == 0, "\(create)")
            #expect(!create.stdout.contains("old store is kept"), "a create step keeps nothing: \(create)")

            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stderr.isEmpty, "no bar without a terminal: \(apply)")
            let lines = apply.stdoutLines
            try #require(lines.count == 3, "\(apply)")
            #expect(lines[0].hasPrefix("step 1 of 1: lightweight 'Recipes 1' -> 'Recipes 3' ("), "\(apply)")
            #expect(lines[1].hasPrefix("step 1 of 1: lightweight 'Recipes 1' -> 'Recipes 3': done, "), "\(apply)")
            #expect(lines[2].hasPrefix("store recipes: now at 'Recipes 3' (1 step(s), "), "\(apply)")
        }
    }

    @Test("apply in text ends naming the schema a heavyweight step kept the old store in", integration)
    func textEndsWithTheBackupSchema() throws {
        try withAppliedStore(model: Self.writeThreeVersions, stores: ["pantry"]) { folder, url, connection in
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", "pantry", "--allow-data-loss"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last == "store pantry: the old store is kept as schema \"pantry~\" (drop it when you no longer need it)", "\(apply)")
            #expect(apply.stdoutLines.dropLast().last?.hasPrefix("store pantry: now at 'Kitchen 3' (2 step(s), ") == true, "\(apply)")

            #expect(try schemaExists("pantry~", on: connection))
        }
    }
}
