import Foundation
import Testing
import TestSupport

/// A smaller sample than the in-process fuzz suites, through the built binary: `validate` on
/// mutated models in both formats and mutated mapping models ends with exit 0, 1 or 64 (never
/// a signal) within a time bound.
@Suite struct ValidateFuzzTests {
    static let timeLimit: TimeInterval = 30

    /// One fuzz input per this many of the in-process suites: the binary is slow to start.
    static var inputCount: Int { max(10, Fuzz.inputCount / 20) }

    /// Runs `validate` on what `prepare` writes into a fresh folder; returns a problem or nil.
    static func validate(_ arguments: (URL) throws -> [String]) throws -> String? {
        try withTemporaryFolder { folder in
            let running = try RunningOrchestrator(["validate"] + arguments(folder), databaseURL: nil)
            let deadline = Date().addingTimeInterval(timeLimit)
            while running.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if running.isRunning {
                running.kill()
                _ = try? running.finish()
                return "hang: still running after \(timeLimit) s"
            }
            let result = try running.finish()
            return [0, 1, 64].contains(result.exitCode) ? nil : "exit \(result.exitCode) (a signal?): \(result.stderr.prefix(500))"
        }
    }

    @Test("validate on mutated native models, Xcode models and mapping models exits 0, 1 or 64 in time")
    func mutatedInputs() throws {
        let native = try Fuzz.fixture("migrations/Recipes 2.yaml")
        let xcode = try Fuzz.fixture("Tests/ObjectModelTests/Fixtures/Recipes.xcdatamodeld/Recipes 1.xcdatamodel/contents")
        let mapping = try Fuzz.fixture("bench/heavyweight/model/recipes-1-to-2.yaml")
        let heavy = try (1...2).map { try Fuzz.fixture("bench/heavyweight/model/Heavy \($0).yaml") }
        var random = FuzzRandom(seed: 0xC11_F022)
        var problems: [String] = []
        for number in 0..<Self.inputCount {
            let kind = number % 3
            let bytes = Fuzz.mutate([native, xcode, mapping][kind], using: &random)
            let problem = try Self.validate { folder in
                switch kind {
                case 0:
                    try Data("name: M\nversions: [V1]\n".utf8).write(to: folder.appendingPathComponent("model.yaml"))
                    try Data(bytes).write(to: folder.appendingPathComponent("V1.yaml"))
                    return ["--model", folder.path]
                case 1:
                    let version = folder.appendingPathComponent("M.xcdatamodeld/M 1.xcdatamodel")
                    try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
                    try Data(bytes).write(to: version.appendingPathComponent("contents"))
                    return ["--model", folder.appendingPathComponent("M.xcdatamodeld").path, "--format", "json"]
                default:
                    try Data("name: Heavy\nversions: [Heavy 1, Heavy 2]\n".utf8).write(to: folder.appendingPathComponent("model.yaml"))
                    for (index, version) in heavy.enumerated() {
                        try Data(version).write(to: folder.appendingPathComponent("Heavy \(index + 1).yaml"))
                    }
                    try Data(bytes).write(to: folder.appendingPathComponent("recipes-1-to-2.yaml"))
                    return ["--model", folder.path]
                }
            }
            if let problem { problems.append("input \(number) (kind \(kind)): \(problem)") }
        }
        #expect(problems.isEmpty, "\(problems)")
    }
}
