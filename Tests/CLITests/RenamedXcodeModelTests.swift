import Foundation
import PostgresClient
import Testing
import TestSupport

/// An `.xcdatamodeld` records no order of versions. Ordered by name, a renamed model's last
/// version (`AppFolio v1.4`) sorts before the one it follows (`AppPartner 5`); Core Data migrates
/// such a store directly, and so must orchestrator (issue 23, "Stores at any old version").
@Suite("A renamed Xcode model: direct steps whatever the names, chains through a declared order")
struct RenamedXcodeModelTests {
    /// Writes `Partner.xcdatamodeld` with one entity, Item, whose string attributes per version
    /// are (name, elementID); the last version given is current.
    static func writeModel(in folder: URL, _ versions: [(name: String, attributes: [(String, String?)])]) throws -> URL {
        let model = folder.appendingPathComponent("Partner.xcdatamodeld")
        for version in versions {
            let lines = version.attributes.map { name, elementID in
                "        <attribute name=\"\(name)\" optional=\"YES\" attributeType=\"String\"" + (elementID.map { " elementID=\"\($0)\"" } ?? "") + "/>"
            }
            let contents = ([
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>",
                "<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">",
                "    <entity name=\"Item\" representedClassName=\"Item\" syncable=\"YES\">",
            ] + lines + ["    </entity>", "</model>"]).joined(separator: "\n") + "\n"
            try write(contents, to: "\(version.name).xcdatamodel/contents", in: model)
        }
        try write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(versions.last!.name).xcdatamodel</string></dict></plist>
            """, to: ".xccurrentversion", in: model)
        return model
    }


    @Test("a store at 'AppPartner 5' goes directly to 'AppFolio v1.4', its rows kept", integration)
    func directStepAgainstNameOrder() throws {
        try withTemporaryFolder { folder in
            let model = try Self.writeModel(in: folder, [
                ("AppPartner 5", [("name", nil)]),
                ("AppFolio v1.4", [("name", nil), ("note", nil)]),
            ]).path
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model, "--store", "partner", "--to", "AppPartner 5"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO partner.item (_entity, name) VALUES ('Item', 'kept 1'), ('Item', 'kept 2')")

                let plan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "partner", "--format", "json"], databaseURL: url)
                #expect(plan.exitCode == 0, "\(plan)")
                let steps = try jsonObject(plan.stdout)["steps"] as? [[String: Any]] ?? []
                #expect(steps.map { "\($0["kind"] ?? "") \($0["from"] ?? "") -> \($0["to"] ?? "")" } == ["lightweight AppPartner 5 -> AppFolio v1.4"])

                let apply = try OrchestratorBinary.run(["apply", "--model", model, "--store", "partner"], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                let kept = try connection.execute("SELECT name, note FROM partner.item ORDER BY _pk").rows
                #expect(kept == [["kept 1", nil], ["kept 2", nil]])
                let stores = try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'partner'")
                #expect(stores.rows == [["AppFolio v1.4"]])
            }
        }
    }

    /// a -> b (v1.0) -> c (v1.4): directly, c is a new attribute and a is dropped; through the
    /// declared order, both renames carry the values.
    static let renamedTwice: [(name: String, attributes: [(String, String?)])] = [
        ("AppPartner 5", [("a", nil)]),
        ("AppFolio v1.0", [("b", "a")]),
        ("AppFolio v1.4", [("c", "b")]),
    ]

    @Test("without a declared order only the direct step runs; with one, the chain through the versions between keeps the values", integration)
    func declaredOrderMakesAChain() throws {
        try withTemporaryFolder { folder in
            let model = try Self.writeModel(in: folder, Self.renamedTwice).path
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model, "--store", "partner", "--to", "AppPartner 5"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO partner.item (_entity, a) VALUES ('Item', 'value')")

                let direct = try OrchestratorBinary.run(["apply", "--model", model, "--store", "partner"], databaseURL: url)
                #expect(direct.exitCode == 1, "a direct step that drops 'a' needs consent: \(direct)")
                #expect(direct.stderr.contains("Item.a removed"), "\(direct)")
                #expect(try connection.execute("SELECT a FROM partner.item").rows == [["value"]], "nothing changed")

                try write("versions:\n  - AppPartner 5\n  - AppFolio v1.0\n  - AppFolio v1.4\n", to: "Partner.versions.yaml", in: folder)
                let plan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "partner", "--format", "json"], databaseURL: url)
                let steps = try jsonObject(plan.stdout)["steps"] as? [[String: Any]] ?? []
                #expect(steps.map { "\($0["from"] ?? "") -> \($0["to"] ?? "")" } == ["AppPartner 5 -> AppFolio v1.0", "AppFolio v1.0 -> AppFolio v1.4"])
                let chain = try OrchestratorBinary.run(["apply", "--model", model, "--store", "partner"], databaseURL: url)
                #expect(chain.exitCode == 0, "\(chain)")
                #expect(try connection.execute("SELECT c FROM partner.item").rows == [["value"]])
            }
        }
    }

    @Test("no direct step and no declared order: the refusal says how to declare the order", integration)
    func refusalSaysHowToDeclareTheOrder() throws {
        try withTemporaryFolder { folder in
            let model = try Self.writeModel(in: folder, [
                ("AppPartner 5", [("name", nil)]),
                ("AppFolio v1.4", [("name", nil)]),
            ])
            // The current version's name becomes an Integer 32: no inferred mapping converts it.
            let contents = model.appendingPathComponent("AppFolio v1.4.xcdatamodel/contents")
            let text = try String(contentsOf: contents, encoding: .utf8).replacingOccurrences(of: "attributeType=\"String\"", with: "attributeType=\"Integer 32\"")
            try text.write(to: contents, atomically: true, encoding: .utf8)
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", model.path, "--store", "partner", "--to", "AppPartner 5"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let plan = try OrchestratorBinary.run(["plan", "--model", model.path, "--store", "partner", "--format", "json"], databaseURL: url)
                let details = try jsonObject(plan.stdout)["blockerDetails"] as? [[String: Any]] ?? []
                #expect(details.compactMap { $0["code"] as? String } == ["notInferable", "noDirectStep"], "\(plan)")
                let message = details.last?["message"] as? String ?? ""
                #expect(message.contains(folder.appendingPathComponent("Partner.versions.yaml").path), "\(message)")
                #expect(message.contains("'AppPartner 5', which sorts after 'AppFolio v1.4' by name"), "\(message)")
            }
        }
    }
}
