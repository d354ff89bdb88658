import Foundation
import PostgresClient
import Testing
import TestSupport

/// Every mapping model found must name versions of the model (issue 9.3); files that are not
/// mapping models never stop a command (issue 9.8).
@Suite("Files beside the model")
struct MappingFilesBesideModelTests {
    /// Temps 2 keeps `temperature` but in Celsius: only the mapping model converts the values.
    static func writeTemps(in folder: URL, mappingSource: String, mappingFolder: URL? = nil) throws -> (model: URL, mapping: URL) {
        let model = folder.appendingPathComponent("Temps")
        try write("name: Temps\nversions: [Temps 1, Temps 2]\n", to: "model.yaml", in: model)
        try write("entities:\n  Reading:\n    attributes:\n      temperature: double\n", to: "Temps 1.yaml", in: model)
        try write("entities:\n  Reading:\n    versionHashModifier: celsius\n    attributes:\n      temperature: double\n", to: "Temps 2.yaml", in: model)
        let mapping = try write("""
            source: \(mappingSource)
            destination: Temps 2
            entityMappings:
              - name: ReadingToReading
                type: transform
                source: Reading
                destination: Reading
                attributes:
                  temperature: "($source.temperature - 32.0) / 1.8"
            """, to: "temps-1-to-2.yaml", in: mappingFolder ?? model)
        return (model, mapping)
    }

    static func typoLine(_ mapping: URL) -> String {
        "\(mapping.path): its source names version 'Temp 1', which Temps does not have; did you mean 'Temps 1'? (versions: Temps 1, Temps 2)"
    }

    @Test("validate reports a mapping model beside the model that names a version it does not have")
    func validateReportsAMisnamedVersion() throws {
        try withTemporaryFolder { folder in
            let (model, mapping) = try Self.writeTemps(in: folder, mappingSource: "Temp 1")
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stdoutLines.filter { $0.hasPrefix("error:") } == ["error: " + Self.typoLine(mapping)], "\(result)")
        }
    }

    @Test("plan and apply refuse a misnamed mapping model beside the model or in --mappings, and change nothing", integration)
    func planAndApplyRefuseAMisnamedVersion() throws {
        try withTemporaryFolder { folder in
            let (model, _) = try Self.writeTemps(in: folder, mappingSource: "Temps 1")
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model.path, "--to", "Temps 1"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO temps.reading (_entity, temperature) VALUES ('Reading', 212), ('Reading', 32)")

                let (_, mapping) = try Self.writeTemps(in: folder, mappingSource: "Temp 1")
                let elsewhere = folder.appendingPathComponent("mappings")
                let (_, passed) = try Self.writeTemps(in: folder, mappingSource: "Temp 1", mappingFolder: elsewhere)

                for (arguments, file) in [([String](), mapping), (["--mappings", elsewhere.path], passed)] {
                    for command in ["plan", "apply"] {
                        let result = try OrchestratorBinary.run([command, "--model", model.path] + arguments, databaseURL: url)
                        #expect(result.exitCode == 1, "\(command) \(arguments): \(result)")
                        #expect(result.stderrLines == ["error: " + Self.typoLine(file)], "\(command) \(arguments): \(result)")
                    }
                }
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Temps 1"]])
                #expect(try connection.execute("SELECT temperature FROM temps.reading ORDER BY _pk").rows == [["212"], ["32"]])

                // Named right, the same mapping model converts every value.
                _ = try Self.writeTemps(in: folder, mappingSource: "Temps 1")
                let apply = try OrchestratorBinary.run(["apply", "--model", model.path], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(try connection.execute("SELECT temperature FROM temps.reading ORDER BY _pk").rows == [["100"], ["0"]])
            }
        }
    }

    @Test("beside an Xcode model, a malformed data.json and other files are not read")
    func filesBesideAnXcodeModelAreNotRead() throws {
        try withTemporaryFolder { folder in
            let model = try ShopModel.xcode.write(in: folder)
            try write("{\"broken\": ", to: "data.json", in: folder)
            try write("entityMappings: [unclosed", to: "notes.yaml", in: folder)
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdoutLines.last == "Shop: 4 version(s), current 'Shop 4': valid", "\(result)")
            #expect(!result.stdout.contains("data.json") && !result.stdout.contains("notes.yaml"), "\(result)")
        }
    }

    @Test("plan and apply beside an Xcode model with a malformed data.json migrate a store holding rows", integration)
    func planAndApplyBesideAMalformedDataFile() throws {
        try withTemporaryFolder { folder in
            let model = try ShopModel.xcode.write(in: folder).path
            try write("{\"broken\": ", to: "data.json", in: folder)
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Shop 3"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO shop.item (_entity, name, note) VALUES ('Item', 'tea', 'green')")
                let plan = try OrchestratorBinary.run(["plan", "--model", model], databaseURL: url)
                #expect(plan.exitCode == 0 && plan.stderr.isEmpty, "\(plan)")
                let apply = try OrchestratorBinary.run(["apply", "--model", model], databaseURL: url)
                #expect(apply.exitCode == 0 && apply.stderr.isEmpty, "\(apply)")
                #expect(try connection.execute("SELECT title, note FROM shop.item").rows == [["tea", "green"]])
            }
        }
    }

    @Test("beside a native model a file that cannot be read is a warning; passed with --mappings it is an error")
    func unreadableFileBesideANativeModel() throws {
        try withTemporaryFolder { folder in
            let model = try ShopModel.yaml.write(in: folder)
            let notes = try write("entityMappings: [unclosed\n", to: "notes.yaml", in: model)
            let warning = "warning: \(notes.path): passed over: cannot be read as a mapping model (line 2: malformed YAML"
            let validate = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(validate.exitCode == 0, "\(validate)")
            #expect(validate.stdoutLines.contains { $0.hasPrefix(warning) }, "\(validate)")
            #expect(validate.stdoutLines.last == "Shop: 4 version(s), current 'Shop 4': valid", "\(validate)")

            let passed = try OrchestratorBinary.run(["validate", "--model", model.path, "--mappings", model.path])
            #expect(passed.exitCode == 1, "\(passed)")
            #expect(passed.stderrLines.first?.hasPrefix("error: \(notes.path):2: malformed YAML") == true, "\(passed)")
        }
    }

    @Test("plan and apply beside a native model print the warning and migrate", integration)
    func planAndApplyWarnAboutAnUnreadableFile() throws {
        try withTemporaryFolder { folder in
            let model = try ShopModel.yaml.write(in: folder)
            let notes = try write("entityMappings: [unclosed\n", to: "notes.yaml", in: model)
            try TestDatabase.withFreshDatabase { url in
                for command in ["plan", "apply"] {
                    let result = try OrchestratorBinary.run([command, "--model", model.path], databaseURL: url)
                    #expect(result.exitCode == 0, "\(command): \(result)")
                    #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("warning: \(notes.path): passed over"), "\(command): \(result)")
                }
                let failing = try OrchestratorBinary.run(["apply", "--model", model.path, "--mappings", model.path], databaseURL: url)
                #expect(failing.exitCode == 1, "\(failing)")
                #expect(failing.stderr.hasPrefix("error: \(notes.path):2: malformed YAML"), "\(failing)")
            }
        }
    }
}
