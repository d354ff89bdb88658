import Foundation
import Testing

/// Commands that never need a database; run with DATABASE_URL removed.
@Suite("Commands without a database")
struct PureCommandTests {
    @Test("--help documents the exit codes 0, 1 and 64")
    func helpListsExitCodes() throws {
        let result = try OrchestratorBinary.run(["--help"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("EXIT CODES"), "\(result)")
        for code in ["0", "1", "64"] {
            let documented = result.stdoutLines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(code + " ") }
            #expect(documented, "exit code \(code) is not documented:\n\(result)")
        }
    }

    @Test("validate says the Recipes model is valid and exits 0")
    func validateAcceptsRecipes() throws {
        let result = try OrchestratorBinary.run(["validate", "--model", "migrations"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdoutLines.last == "Recipes: 3 version(s), current 'Recipes 3': valid", "\(result)")
        #expect(!result.stdout.contains("error:"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test("validate warns with a stable code about an inverse that names another relationship back, and exits 0")
    func validateWarnsAboutAnInverseThatIsNotMutual() throws {
        let result = try OrchestratorBinary.run(["validate", "--model", "Tests/ObjectModelTests/Fixtures/Hierarchies.xcdatamodeld"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdoutLines.first == "warning: Tests/ObjectModelTests/Fixtures/Hierarchies.xcdatamodeld/Hierarchies 1.xcdatamodel/contents: entity Image, property artist: its inverse Artist.thumbnail names 'thumbnailOf' as its own inverse; stored as a relationship without an inverse [inverse-not-mutual]", "\(result)")
        #expect(result.stdoutLines.last == "Hierarchies: 2 version(s), current 'Hierarchies 2': valid", "\(result)")
    }

    @Test("hash --format json gives name, model hash and entity hashes of every version")
    func hashJSONShape() throws {
        let result = try OrchestratorBinary.run(["hash", "--model", "migrations", "--format", "json"])
        #expect(result.exitCode == 0, "\(result)")
        let versions = try versionsOfHashOutput(result.stdout)
        #expect(versions.map(\.name) == ["Recipes 1", "Recipes 2", "Recipes 3"])
        for version in versions {
            #expect(version.entities.keys.contains("Recipe"), "\(version.name): \(version.entities)")
        }
        #expect(Set(versions.map(\.modelHash)).count == 3, "every version has its own model hash")
    }

    @Test("hash --version gives that version only")
    func hashOneVersion() throws {
        let all = try versionsOfHashOutput(OrchestratorBinary.run(["hash", "--model", "migrations", "--format", "json"]).stdout)
        let result = try OrchestratorBinary.run(["hash", "--model", "migrations", "--format", "json", "--version", "Recipes 2"])
        #expect(result.exitCode == 0, "\(result)")
        let versions = try versionsOfHashOutput(result.stdout)
        #expect(versions.map(\.name) == ["Recipes 2"])
        #expect(versions.first?.modelHash == all.first { $0.name == "Recipes 2" }?.modelHash)
    }

    @Test("hash with an unknown --version is a usage error naming the versions")
    func hashUnknownVersion() throws {
        let result = try OrchestratorBinary.run(["hash", "--model", "migrations", "--version", "Recipes 9"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderrLines.first?.contains("no version named 'Recipes 9'") == true, "\(result)")
        #expect(result.stderrLines.first?.contains("Recipes 1, Recipes 2, Recipes 3") == true, "\(result)")
    }
}

struct HashedVersion {
    var name: String
    var modelHash: String
    var entities: [String: String]
}

/// Reads `hash --format json`, requiring exactly `{"versions":[{"name","modelHash","entities"}]}`
/// with SHA-256 hex digests.
func versionsOfHashOutput(_ stdout: String) throws -> [HashedVersion] {
    let root = try jsonObject(stdout)
    #expect(Set(root.keys) == ["versions"])
    let versions = try #require(root["versions"] as? [[String: Any]], "versions is not an array of objects: \(stdout)")
    return try versions.map { version in
        #expect(Set(version.keys) == ["name", "modelHash", "entities"], "\(version)")
        let name = try #require(version["name"] as? String)
        let modelHash = try #require(version["modelHash"] as? String)
        let entities = try #require(version["entities"] as? [String: String], "\(name): entities is not an object of strings")
        #expect(isSHA256Hex(modelHash), "\(name): model hash \(modelHash)")
        #expect(!entities.isEmpty, "\(name) has no entities")
        for (entity, hash) in entities {
            #expect(isSHA256Hex(hash), "\(name).\(entity): hash \(hash)")
        }
        return HashedVersion(name: name, modelHash: modelHash, entities: entities)
    }
}

func isSHA256Hex(_ text: String) -> Bool {
    text.utf8.count == 64 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
}
