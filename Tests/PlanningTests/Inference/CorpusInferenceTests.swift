import Foundation
import Testing
import ObjectModel
import Planning

/// Inference on every consecutive pair of versions of real apps' models (../shared/corpus),
/// compared line by line with Tests/PlanningTests/Expectations/corpus-inference.txt, a file
/// reviewed by hand. `ORCHESTRATOR_RECORD_EXPECTATIONS=1` rewrites the file instead: review the
/// diff before committing it.
@Suite struct CorpusInferenceTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let expectationFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Expectations/corpus-inference.txt").path

    /// `$ORCHESTRATOR_CORPUS`, else ../shared/corpus beside the repository, else /work/shared/corpus.
    static let corpus: String = {
        if let path = ProcessInfo.processInfo.environment["ORCHESTRATOR_CORPUS"], !path.isEmpty { return path }
        let beside = URL(fileURLWithPath: repository).deletingLastPathComponent().appendingPathComponent("shared/corpus").path
        if FileManager.default.fileExists(atPath: beside + "/index.json") { return beside }
        return "/work/shared/corpus"
    }()

    /// (repository folder, bundle path, versions in migration order), sorted.
    static func bundles() throws -> [(repository: String, path: String, versions: [String])] {
        let data = try #require(FileManager.default.contents(atPath: corpus + "/index.json"), "no corpus at \(corpus)")
        let index = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let repos = try #require(index["repos"] as? [String: [String: Any]])
        var result: [(String, String, [String])] = []
        for (repository, info) in repos.sorted(by: { $0.key < $1.key }) {
            let models = (info["models"] as? [String: [String: Any]]) ?? [:]
            for (path, model) in models.sorted(by: { $0.key < $1.key }) {
                let versions = ((model["versions"] as? [String]) ?? []).map { ($0 as NSString).deletingPathExtension }
                result.append((repository, path, versions))
            }
        }
        return result
    }

    /// One line per consecutive pair: `<repo>/<bundle>: <from> -> <to>: inferable`, or
    /// `…: refused: <reason>; <reason>` with the reasons sorted.
    static func verdicts() throws -> [String] {
        var lines: [String] = []
        for bundle in try bundles() {
            let model = try ModelLoader.load(path: "\(corpus)/\(bundle.repository)/\(bundle.path)")
            let versions = try bundle.versions.map { name in try #require(model.version(named: name), "\(bundle.path) has no version \(name)") }
            for (from, to) in zip(versions, versions.dropFirst()) {
                let prefix = "\(bundle.repository)/\(bundle.path): \(from.name) -> \(to.name): "
                switch MappingInference.infer(from: from, to: to) {
                case .inferable:
                    lines.append(prefix + "inferable")
                case .refused(let refusals):
                    lines.append(prefix + "refused: " + refusals.map(\.description).sorted().joined(separator: "; "))
                }
            }
        }
        return lines
    }

    @Test func everyConsecutivePairHasTheReviewedVerdict() throws {
        let actual = try Self.verdicts()
        #expect(actual.count > 100, "expected the corpus at \(Self.corpus)")
        if ProcessInfo.processInfo.environment["ORCHESTRATOR_RECORD_EXPECTATIONS"] == "1" {
            try (actual.joined(separator: "\n") + "\n").write(toFile: Self.expectationFile, atomically: true, encoding: .utf8)
            return
        }
        let text = try String(contentsOfFile: Self.expectationFile, encoding: .utf8)
        let expected = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        for line in expected where !actual.contains(line) {
            Issue.record("expected, not inferred: \(line)")
        }
        for line in actual where !expected.contains(line) {
            Issue.record("inferred, not expected: \(line)")
        }
        if Set(actual) == Set(expected) {
            #expect(actual == expected, "the same lines, in another order")
        }
    }

    // MARK: Findings of the hand review, pinned

    static func mapping(_ repository: String, _ bundle: String, from: String, to: String) throws -> InferredMapping {
        let model = try ModelLoader.load(path: "\(corpus)/\(repository)/\(bundle)")
        let source = try #require(model.version(named: from))
        let destination = try #require(model.version(named: to))
        let result = MappingInference.infer(from: source, to: destination)
        return try #require(result.mapping, "refused: \(result.refusals)")
    }

    static func propertyMapping(_ mapping: InferredMapping, _ entity: String, _ property: String) -> PropertyMapping? {
        guard let entityMapping = mapping.mapping(forDestinationEntity: entity) ?? mapping.mapping(forSourceEntity: entity) else { return nil }
        return (entityMapping.attributeMappings + entityMapping.relationshipMappings).first { ($0.destination ?? $0.source) == property }
    }

    /// LoopKit v1 has both `programmedTempBasalRate` (identifier `scheduledTempBasalRate`) and
    /// `scheduledTempBasalRate`; v4 keeps the first. Its own mapping model copies it by name.
    @Test func aKeptAttributeWithAStaleIdentifierKeepsItsValues() throws {
        let mapping = try Self.mapping("LoopKit__LoopKit", "Model.xcdatamodeld", from: "Model", to: "Modelv4")
        let programmed = Self.propertyMapping(mapping, "CachedInsulinDeliveryObject", "programmedTempBasalRate")
        #expect(programmed?.kind == .copy && programmed?.source == "programmedTempBasalRate")
        #expect(Self.propertyMapping(mapping, "CachedInsulinDeliveryObject", "scheduledTempBasalRate")?.kind == .remove)
        // `anchorKey`'s identifier names nothing the source entity has: a plain addition.
        #expect(Self.propertyMapping(mapping, "CachedCarbObject", "anchorKey")?.kind == .add)
    }

    /// WooCommerce 115 renames OrderMetaData with an elementID; 116 keeps the now stale identifier.
    @Test func anEntityRenamedByElementIDKeepsItsRowsAndLinks() throws {
        let renamed = try Self.mapping("woocommerce__woocommerce-ios", "WooCommerce.xcdatamodeld", from: "Model 114", to: "Model 115")
        let metaData = try #require(renamed.mapping(forDestinationEntity: "MetaData"))
        #expect(metaData.kind == .rename && metaData.sourceEntity == "OrderMetaData")
        #expect(Self.propertyMapping(renamed, "Order", "customFields")?.kind == .copy)
        #expect(!renamed.hasDataLoss)
        let kept = try Self.mapping("woocommerce__woocommerce-ios", "WooCommerce.xcdatamodeld", from: "Model 115", to: "Model 116")
        #expect(kept.mapping(forDestinationEntity: "MetaData")?.kind == .copy)
    }

    /// WooCommerce 32 renames Attribute to GenericAttribute without an elementID: Core Data
    /// infers drop + add (its MIGRATIONS.md says the data is kept; without an identifier it is not).
    @Test func anEntityRenamedWithoutIdentifierIsDroppedAndAdded() throws {
        let mapping = try Self.mapping("woocommerce__woocommerce-ios", "WooCommerce.xcdatamodeld", from: "Model 31", to: "Model 32")
        #expect(mapping.mapping(forSourceEntity: "Attribute")?.kind == .remove)
        #expect(mapping.mapping(forDestinationEntity: "GenericAttribute")?.kind == .add)
        #expect(mapping.hasDataLoss)
    }
}

