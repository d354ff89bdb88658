import Foundation
import ObjectModel
import Testing
import TestSupport

/// Mutated models in both formats: loading returns a version or throws, never crashes or
/// hangs; what loads goes through validation and, when valid, version hashing.
@Suite struct ModelFuzzTests {
    static func exercise(_ version: ModelVersion) {
        if ModelValidator.validate(version).isEmpty {
            _ = VersionHash.hashes(of: version)
        }
    }

    @Test("mutated native YAML versions load or throw")
    func nativeVersions() throws {
        let fixtures = try (1...3).map { try Fuzz.fixture("migrations/Recipes \($0).yaml") }
        let outcome = Fuzz.run("native model", seed: 0x4D0D_E1, make: { random in
            Fuzz.mutate(fixtures[random.int(in: 0...fixtures.count - 1)], using: &random)
        }) { bytes in
            // As a file is read: text that is not UTF-8 is refused before YAML sees it.
            guard let text = String(validating: bytes, as: UTF8.self) else { return }
            if let version = try? NativeModelLoader.parseVersion(text, name: "v", file: "v.yaml") { Self.exercise(version) }
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }

    @Test("mutated Xcode contents load or throw")
    func xcodeContents() throws {
        // The fixture and the first version of a few real apps' models.
        let corpus = Corpus.bundles.prefix(6).compactMap { bundle in
            bundle.versions.first.flatMap { FileManager.default.contents(atPath: bundle.fullPath + "/\($0).xcdatamodel/contents") }.map { [UInt8]($0) }
        }
        let fixtures = try [Fuzz.fixture("Tests/ObjectModelTests/Fixtures/Recipes.xcdatamodeld/Recipes 1.xcdatamodel/contents")] + corpus
        let outcome = Fuzz.run("Xcode model", seed: 0xC0_47E4_75, make: { random in
            Fuzz.mutate(fixtures[random.int(in: 0...fixtures.count - 1)], using: &random)
        }) { bytes in
            var warnings: [ModelIssue] = []
            if let version = try? XcodeModelLoader.parseContents(Data(bytes), name: "v", file: "contents", warnings: &warnings) {
                Self.exercise(version)
            }
        }
        #expect(outcome.hangs.isEmpty, "\(outcome.hangs)")
    }
}
