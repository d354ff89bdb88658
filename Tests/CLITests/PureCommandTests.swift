import Foundation
import Testing

/// Commands that never need a database; run with DATABASE_URL removed. Their output is the
/// contract, so each test compares all of it and the exit code.
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

    /// Issue 22: what a new user meets first.
    @Test("--version prints the release and the metadata layout version it writes")
    func versionNamesReleaseAndLayout() throws {
        try assertCommand(["--version"], output: "orchestrator 0.1.0 (writes metadata layout version 4)")
    }

    @Test("--help lists each subcommand once")
    func helpListsEachSubcommandOnce() throws {
        let result = try OrchestratorBinary.run(["--help"])
        let listed = result.stdoutLines.drop { $0 != "SUBCOMMANDS:" }.dropFirst().prefix { !$0.contains("See 'orchestrator help") }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed == ["status", "plan", "apply", "infer", "hash", "validate", "diagram", "history", "restore", "adopt", "fleet", "control", "complete", "rollback"], "\(result)")
    }

    @Test("validate says the Recipes model is valid and exits 0")
    func validateAcceptsRecipes() throws {
        try assertCommand(["validate", "--model", "migrations"], output: "Recipes: 3 version(s), current 'Recipes 3': valid")
    }

    @Test("validate warns with a stable code about an inverse that names another relationship back, and exits 0")
    func validateWarnsAboutAnInverseThatIsNotMutual() throws {
        let model = "Tests/ObjectModelTests/Fixtures/Hierarchies.xcdatamodeld"
        let warning = "entity Image, property artist: its inverse Artist.thumbnail names 'thumbnailOf' as its own inverse; stored as a relationship without an inverse [inverse-not-mutual]"
        try assertCommand(["validate", "--model", model], output: """
            warning: \(model)/Hierarchies 1.xcdatamodel/contents: \(warning)
            warning: \(model)/Hierarchies 2.xcdatamodel/contents: \(warning)
            Hierarchies: 2 version(s), current 'Hierarchies 2': valid
            """)
    }

    /// The Recipes model's hashes: they identify a store's version, so they never change
    /// unless the model does.
    static let recipeHashes = [
        "Recipes 1": "5cd480b78ce8bfcbe7f671eede88114a99237fdec328e35c7df39334d5f934c1",
        "Recipes 2": "f4765e15b1021f7158fe086409ddbc2b402af2bf722de0fb5362accd6691687e",
        "Recipes 3": "1946af5ee5c6b5a17f8138f4747e3caf34f80c9357f0540fea1a94713d52bc67",
        "Chef": "f4be8cb13f35e55df5d8a1b2a898576cbe2e1c3aa276b37a77a69ed8455a9258",
        "Cuisine": "6c92ed752f8f8c0ba41a1ca41378bbfb23de56e047ad9d09d15a9714324aec87",
        "Ingredient": "31c7439d694e80195497b760ff624ee4abad12d062cc22d08176777995047a23",
        "Recipe 1": "84ee95eff36aef659884eb9cd1ffa1392a6015ab423a1d059ace4926cd144a66",
        "Recipe 2": "1f0912473d741574d553030270f3e346c63a976a5ddfe837373a6c38db18b688",
        "Recipe 3": "86552d7d986e73c5c4c8187f4d7938d842e313f5e1c245127a21cb93b854dd04",
    ]

    @Test("hash lists every version's model hash and entity hashes, the current version marked")
    func hashText() throws {
        let hash = Self.recipeHashes
        try assertCommand(["hash", "--model", "migrations"], output: """
            Recipes 1  \(hash["Recipes 1"]!)
              Chef  \(hash["Chef"]!)
              Ingredient  \(hash["Ingredient"]!)
              Recipe  \(hash["Recipe 1"]!)
            Recipes 2  \(hash["Recipes 2"]!)
              Chef  \(hash["Chef"]!)
              Cuisine  \(hash["Cuisine"]!)
              Ingredient  \(hash["Ingredient"]!)
              Recipe  \(hash["Recipe 2"]!)
            Recipes 3 (current)  \(hash["Recipes 3"]!)
              Chef  \(hash["Chef"]!)
              Cuisine  \(hash["Cuisine"]!)
              Ingredient  \(hash["Ingredient"]!)
              Recipe  \(hash["Recipe 3"]!)
            """)
    }

    @Test("hash --format json gives name, model hash and entity hashes of every version")
    func hashJSON() throws {
        let hash = Self.recipeHashes
        try assertCommand(["hash", "--model", "migrations", "--format", "json"], output: """
            {"versions":[\
            {"name":"Recipes 1","modelHash":"\(hash["Recipes 1"]!)","entities":{\
            "Chef":"\(hash["Chef"]!)","Ingredient":"\(hash["Ingredient"]!)","Recipe":"\(hash["Recipe 1"]!)"}},\
            {"name":"Recipes 2","modelHash":"\(hash["Recipes 2"]!)","entities":{\
            "Chef":"\(hash["Chef"]!)","Cuisine":"\(hash["Cuisine"]!)","Ingredient":"\(hash["Ingredient"]!)","Recipe":"\(hash["Recipe 2"]!)"}},\
            {"name":"Recipes 3","modelHash":"\(hash["Recipes 3"]!)","entities":{\
            "Chef":"\(hash["Chef"]!)","Cuisine":"\(hash["Cuisine"]!)","Ingredient":"\(hash["Ingredient"]!)","Recipe":"\(hash["Recipe 3"]!)"}}\
            ]}
            """)
    }

    @Test("hash --version gives that version only")
    func hashOneVersion() throws {
        let hash = Self.recipeHashes
        try assertCommand(["hash", "--model", "migrations", "--format", "json", "--version", "Recipes 2"], output: """
            {"versions":[{"name":"Recipes 2","modelHash":"\(hash["Recipes 2"]!)","entities":{\
            "Chef":"\(hash["Chef"]!)","Cuisine":"\(hash["Cuisine"]!)","Ingredient":"\(hash["Ingredient"]!)","Recipe":"\(hash["Recipe 2"]!)"}}]}
            """)
    }

    @Test("hash with an unknown --version is a usage error naming the versions")
    func hashUnknownVersion() throws {
        try assertCommand(
            ["hash", "--model", "migrations", "--version", "Recipes 9"],
            errorOutput: "error: no version named 'Recipes 9' in migrations (versions: Recipes 1, Recipes 2, Recipes 3)", exitCode: 64
        )
    }
}
