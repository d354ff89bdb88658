import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Real apps' mapping models (CorpusMappingTests' and CorpusPolicyTests' cases) applied with
/// `apply --online` to a store holding generated rows and offline to a twin holding the same
/// rows: the online store must end as the offline one, catalog and every row (keys included:
/// with no write meanwhile both runs associate the rows alike), with nothing of the online run
/// left. A mapping model that fails offline on generated rows fails online the same way, the
/// store left at its source version.
@Suite(integration) struct CorpusOnlineMappingTests {
    typealias Corpus = CorpusMappingTests
    typealias Policies = CorpusPolicyTests
    static let live = Corpus.store
    static let offline = "corpus_offline"
    static let rowsPerEntity = 12

    /// A mapping model and what makes it apply: the stand-in policies it names, and the
    /// statements that give the generated rows what the app guarantees.
    struct Case: Sendable, CustomStringConvertible {
        var package: TestSupport.Corpus.MappingPackage
        var prepare: [String] = []
        var standIns = false
        var description: String { package.path + (prepare.isEmpty ? "" : " (prepared)") + (standIns ? " (stand-in policies)" : "") }
    }

    static let cases: [Case] = {
        var cases = Corpus.runnable.map { Case(package: $0) }
        // What CorpusMappingTests' tests of the two failing ones set before applying.
        let prepared: [String: [String]] = [
            "altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel": [
                "UPDATE corpus_store.store_app SET source_pk = (SELECT min(_pk) FROM corpus_store.source) WHERE source_pk IS NULL",
                """
                UPDATE corpus_store.store_app AS x SET source_order = o.position
                FROM (SELECT _pk, row_number() OVER (PARTITION BY source_pk ORDER BY _pk) - 1 AS position FROM corpus_store.store_app) AS o
                WHERE o._pk = x._pk
                """,
                "UPDATE corpus_store.app_permission SET app_pk = (SELECT min(_pk) FROM corpus_store.store_app) WHERE app_pk IS NULL",
            ],
            "threema-ch__threema-ios/ThreemaData.xcmappingmodel": ["UPDATE corpus_store.message SET text = 'message ' || _pk WHERE text IS NULL"],
            "threema-ch__threema-ios/ThreemaDataEncrypted.xcmappingmodel": ["UPDATE corpus_store.message SET text = 'message ' || _pk WHERE text IS NULL"],
        ]
        for package in Corpus.runnable {
            if let statements = prepared[package.path] { cases.append(Case(package: package, prepare: statements)) }
        }
        cases += Policies.packages.map { Case(package: $0, prepare: Policies.prepare[$0.path] ?? [], standIns: true) }
        return cases
    }()

    @Test func theCasesAreEveryMappingModelOfTheCorpus() {
        #expect(Set(Self.cases.map(\.package.path)) == Set(TestSupport.Corpus.mappingPackages.map(\.path)))
    }

    @Test(arguments: cases)
    func theMappingModelAppliesOnlineAsOffline(_ mappingCase: Case) throws {
        try Self.check(mappingCase)
    }

    /// 1. Fill the live store at the mapping's source version, prepare it, copy it into the
    ///    offline twin.
    /// 2. Apply the mapping model offline to the twin. If it fails (CorpusMappingTests'
    ///    expected failures), online must fail too, both stores left at the source version.
    /// 3. Otherwise apply it online and compare catalog and rows; nothing online is left.
    static func check(_ mappingCase: Case) throws {
        let (mapping, model) = try Corpus.load(mappingCase.package)
        let context = mappingCase.description
        let registry = PolicyRegistry()
        if mappingCase.standIns {
            for policy in Policies.policies(of: mapping) { registry.register(policy) { Policies.StandIn() } }
        }
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: mapping.source, store: live, rows: rowsPerEntity, on: connection)
            for statement in mappingCase.prepare { try connection.execute(SQL(unsafeRaw: statement)) }
            try TwinStores.copy(model, version: mapping.source, from: live, to: offline, on: connection)
            func migrator(_ store: String) -> StoreMigrator {
                var migrator = StoreMigrator(
                    connection: connection, model: model, store: store, targetVersion: mapping.destination, explicitMappings: [ExplicitMapping(mapping)]
                )
                migrator.policies = registry
                return migrator
            }
            #expect(try migrator(live).plan().steps.map(\.kind) == [.heavyweight], "\(context)")
            let offlineOutcome = Result { try migrator(offline).apply() }
            let onlineOutcome = Result { try migrator(live).apply(options: ApplyOptions(online: true)) }
            switch (offlineOutcome, onlineOutcome) {
            case (.failure(let offlineError), .failure(let onlineError)):
                #expect(try TwinStores.version(of: live, on: connection) == mapping.source, "\(context): the store left its version online")
                #expect(try TwinStores.version(of: offline, on: connection) == mapping.source, "\(context)")
                #expect(sameFailure(offlineError, onlineError), "\(context): fails offline with \(offlineError), online with \(onlineError)")
                let differences = try TwinComparison.differences(live, offline, on: connection)
                #expect(differences == [], "\(context): the stores differ after both failed:\n\(differences.prefix(12).joined(separator: "\n"))")
                // The failed step keeps its passes in the staging schema, and the statement
                // triggers of its change log, as offline; online also the row triggers feeding
                // the change log, so that `apply --online` continues once the rows are right.
                // `apply --restart` (offline) takes the row triggers away.
                let offlineLeft = try TwinStores.leftovers(of: offline, on: connection)
                let onlineLeft = try TwinStores.leftovers(of: live, on: connection)
                #expect(offlineLeft.contains("staging schema"), "\(context): the passes done are gone: \(offlineLeft)")
                #expect(onlineLeft.filter { !Self.onlineChangeLog.contains(String($0.split(separator: ".").last ?? "")) && $0 != "function " + OnlineCatchUp.function } == offlineLeft, "\(context): left by the online run: \(onlineLeft)")
                #expect(throws: (any Error).self, "\(context): applies on restart") { try migrator(live).apply(options: ApplyOptions(restart: true)) }
                let afterRestart = try TwinStores.leftovers(of: live, on: connection)
                #expect(afterRestart == offlineLeft, "\(context): left after --restart: \(afterRestart)")
                #expect(try TwinComparison.differences(live, offline, on: connection) == [], "\(context)")
            case (.failure(let error), .success):
                Issue.record("\(context): fails offline (\(error)) but applies online")
            case (.success, .failure(let error)):
                Issue.record("\(context): applies offline but fails online: \(error)")
            case (.success, .success):
                #expect(try TwinStores.version(of: live, on: connection) == mapping.destination, "\(context)")
                #expect(try TwinStores.version(of: offline, on: connection) == mapping.destination, "\(context)")
                #expect(try TwinStores.rowCount(of: offline, on: connection) > 0, "\(context): no rows compared")
                let differences = try TwinComparison.differences(live, offline, on: connection)
                #expect(differences == [], "\(context): online and offline stores differ:\n\(differences.prefix(12).joined(separator: "\n"))")
                #expect(try TwinStores.leftovers(of: live, on: connection) == [], "\(context): left by the online run")
            }
        }
    }

    /// The row triggers of an online step's change log.
    static let onlineChangeLog: Set<String> = [OnlineCatchUp.trigger, OnlineCatchUp.pointedTrigger, CatchUpTruncates.trigger, CatchUpTruncates.pointedTrigger]

    /// The same failure: the database error's SQLSTATE and message (not the statement, which
    /// names the store).
    static func sameFailure(_ offlineError: Error, _ onlineError: Error) -> Bool {
        func reason(_ error: Error) -> String {
            let text = String(describing: error)
            guard let start = text.range(of: "ERROR ")?.lowerBound else { return text }
            let end = text[start...].range(of: " (statement: ")?.lowerBound ?? text.endIndex
            return String(text[start..<end])
        }
        return reason(offlineError) == reason(onlineError)
    }
}
