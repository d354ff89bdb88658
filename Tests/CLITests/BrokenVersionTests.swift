import Foundation
import ObjectModel
import PostgresClient
import Testing
import TestSupport

/// One version that cannot be used (issue 8.3) stops only the commands that need it.
@Suite("A model with one broken version")
struct BrokenVersionTests {
    @Test("infer between two good versions answers; infer to the broken one names its file", arguments: ShopModel.allCases)
    func inferBetweenGoodVersions(format: ShopModel) throws {
        try withTemporaryFolder { folder in
            let model = try format.write(in: folder, broken: "Shop 2").path
            let later = try OrchestratorBinary.run(["infer", "--model", model, "--from", "Shop 3", "--to", "Shop 4"])
            #expect(later.exitCode == 0, "\(later)")
            #expect(later.stdoutLines.first == "'Shop 3' -> 'Shop 4': inferable", "\(later)")
            #expect(later.stderr.isEmpty, "\(later)")
            let around = try OrchestratorBinary.run(["infer", "--model", model, "--from", "Shop 1", "--to", "Shop 3"])
            #expect(around.exitCode == 0, "\(around)")

            let broken = try OrchestratorBinary.run(["infer", "--model", model, "--from", "Shop 1", "--to", "Shop 2"])
            #expect(broken.exitCode == 1, "\(broken)")
            #expect(broken.stderrLines.count == 1, "\(broken)")
            #expect(broken.stderrLines.first?.hasPrefix("error: " + format.versionFile("Shop 2", in: URL(fileURLWithPath: model))) == true, "\(broken)")
            #expect(broken.stderr.contains(format.problem), "\(broken)")
        }
    }

    @Test("validate reports the broken version naming its file, and the others as valid", arguments: ShopModel.allCases)
    func validateNamesTheBrokenVersion(format: ShopModel) throws {
        try withTemporaryFolder { folder in
            let model = try format.write(in: folder, broken: "Shop 2")
            let result = try OrchestratorBinary.run(["validate", "--model", model.path])
            #expect(result.exitCode == 1, "\(result)")
            let errors = result.stdoutLines.filter { $0.hasPrefix("error:") }
            #expect(errors.count == 1, "\(result)")
            #expect(errors.first?.hasPrefix("error: " + format.versionFile("Shop 2", in: model)) == true, "\(result)")
            #expect(errors.first?.contains(format.problem) == true, "\(result)")
            #expect(result.stdoutLines.last == "Shop: 4 version(s), current 'Shop 4': 1 problem(s)", "\(result)")

            let json = try OrchestratorBinary.run(["validate", "--model", model.path, "--format", "json"])
            let versions = try #require(try jsonObject(json.stdout)["versions"] as? [[String: Any]], "\(json)")
            #expect(versions.map { $0["name"] as? String } == ShopModel.versions, "\(json)")
            #expect(versions.map { $0["valid"] as? Bool } == [true, false, true, true], "\(json)")
        }
    }

    @Test("hash hashes the good versions and refuses the broken one, naming its file", arguments: ShopModel.allCases)
    func hashRefusesTheBrokenVersion(format: ShopModel) throws {
        try withTemporaryFolder { folder in
            let model = try format.write(in: folder, broken: "Shop 2")
            let good = try OrchestratorBinary.run(["hash", "--model", model.path, "--version", "Shop 3"])
            #expect(good.exitCode == 0, "\(good)")
            #expect(good.stdoutLines.first?.hasPrefix("Shop 3  ") == true, "\(good)")
            for arguments in [["--version", "Shop 2"], []] {
                let refused = try OrchestratorBinary.run(["hash", "--model", model.path] + arguments)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stdout.isEmpty, "\(refused)")
                #expect(refused.stderrLines.first?.hasPrefix("error: " + format.versionFile("Shop 2", in: model)) == true, "\(refused)")
            }
        }
    }

    @Test("plan and apply migrate a store past the broken version, rows kept; a way through it is refused naming it", integration, arguments: ShopModel.allCases)
    func planAndApplyAroundTheBrokenVersion(format: ShopModel) throws {
        try withTemporaryFolder { folder in
            let model = try format.write(in: folder, broken: "Shop 2").path
            let brokenFile = format.versionFile("Shop 2", in: URL(fileURLWithPath: model))
            try TestDatabase.withFreshDatabase { url in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }

                // A store at Shop 3: its way to Shop 4 does not go through Shop 2.
                let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Shop 3"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                try connection.execute("INSERT INTO shop.item (_entity, name, note) VALUES ('Item', 'tea', 'green'), ('Item', 'coffee', NULL), ('Item', NULL, 'none')")
                let before = try connection.execute("SELECT _pk, name, note FROM shop.item ORDER BY _pk").rows
                let plan = try OrchestratorBinary.run(["plan", "--model", model, "--format", "json"], databaseURL: url)
                #expect(plan.exitCode == 0, "\(plan)")
                let planned = try jsonObject(plan.stdout)
                #expect(planned["executable"] as? Bool == true, "\(plan)")
                #expect((planned["steps"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["lightweight"], "\(plan)")
                let apply = try OrchestratorBinary.run(["apply", "--model", model], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(apply.stdoutLines.last?.hasPrefix("store shop: now at 'Shop 4'") == true, "\(apply)")
                #expect(try connection.execute("SELECT _pk, title, note FROM shop.item ORDER BY _pk").rows == before, "every row and value, by _pk")

                // A store at Shop 1 would go through Shop 2: refused, naming its file; nothing changes.
                let older = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Shop 1", "--store", "older"], databaseURL: url)
                #expect(older.exitCode == 0, "\(older)")
                try connection.execute("INSERT INTO older.item (_entity, name) VALUES ('Item', 'kept')")
                let refusedPlan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "older"], databaseURL: url)
                #expect(refusedPlan.exitCode == 0, "plan shows what stops apply: \(refusedPlan)")
                let blocker = refusedPlan.stdoutLines.first { $0.hasPrefix("cannot apply: ") }
                #expect(blocker?.hasPrefix("cannot apply: the way from 'Shop 1' to 'Shop 4' goes through 'Shop 2', which cannot be used: \(brokenFile)") == true, "\(refusedPlan)")
                #expect(blocker?.contains(format.problem) == true, "\(refusedPlan)")
                let refused = try OrchestratorBinary.run(["apply", "--model", model, "--store", "older"], databaseURL: url)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderr.contains("goes through 'Shop 2', which cannot be used: \(brokenFile)"), "\(refused)")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'older'").rows == [["Shop 1"]])
                #expect(try connection.execute("SELECT name FROM older.item").rows == [["kept"]])
            }
        }
    }

    /// In YAML the broken version cannot be read, so it could not be compared whatever the
    /// store's hash; in Xcode it fails validation, and the store carries its very hash: a
    /// version that cannot be created never matches.
    @Test("a store whose hash matches no usable version is refused naming its hash and the broken version", integration, arguments: ShopModel.allCases)
    func unknownStoreNamesTheBrokenVersion(format: ShopModel) throws {
        try withTemporaryFolder { folder in
            let model = try format.write(in: folder, broken: "Shop 2").path
            let unknownHash = switch format {
            case .yaml: String(repeating: "ab", count: 32)
            case .xcode: VersionHash.hashes(of: try #require(try ModelLoader.loadEachVersion(path: model).version(named: "Shop 2"))).model
            }
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Shop 3"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("UPDATE orchestrator.stores SET model_hash = \(unknownHash) WHERE store = 'shop'")
                let plan = try OrchestratorBinary.run(["plan", "--model", model], databaseURL: url)
                #expect(plan.exitCode == 1, "\(plan)")
                #expect(plan.stderr.contains("model hash \(unknownHash), which matches no version"), "\(plan)")
                #expect(plan.stderr.contains("version 'Shop 2' could not be compared, it cannot be used: \(format.versionFile("Shop 2", in: URL(fileURLWithPath: model)))"), "\(plan)")
            }
        }
    }
}

/// `hash` refuses what `validate` rejects (issue 9.9): there is no store such a version could make.
@Suite("hash of an invalid model")
struct HashOfInvalidModelTests {
    @Test("hash exits 1 naming the problem for an inheritance cycle and for a missing destination", arguments: [
        ("entities:\n  A: {parent: B}\n  B: {parent: A}\n", "inheritance cycle"),
        ("entities:\n  Order:\n    relationships:\n      customer: {destination: Customer}\n", "destination entity 'Customer' does not exist"),
    ])
    func hashRefusesAnInvalidVersion(version: String, problem: String) throws {
        try withTemporaryFolder { folder in
            let model = folder.appendingPathComponent("M")
            try write("name: M\nversions: [M 1]\n", to: "model.yaml", in: model)
            let file = try write(version, to: "M 1.yaml", in: model)
            for format in ["text", "json"] {
                let result = try OrchestratorBinary.run(["hash", "--model", model.path, "--format", format])
                #expect(result.exitCode == 1, "\(result)")
                #expect(result.stdout.isEmpty, "\(result)")
                #expect(result.stderr.hasPrefix("error: "), "\(result)")
                #expect(result.stderr.contains(file.path + ": entity "), "\(result)")
                #expect(result.stderr.contains(problem), "\(result)")
            }
        }
    }
}
