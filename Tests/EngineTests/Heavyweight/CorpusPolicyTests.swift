import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The corpus's mapping models that name custom policies: without them registered, `plan`
/// stops naming each one; with stand-ins registered under the apps' class names, they plan and
/// apply on generated rows, streaming the entity mappings that need Swift.
@Suite(integration) struct CorpusPolicyTests {
    typealias Corpus = CorpusMappingTests

    static let packages = TestSupport.Corpus.mappingPackages.filter { Corpus.namingPolicies.contains($0.path) }

    /// Stands in for the apps' policy classes (not their logic, which lives in their Swift):
    /// Xcode's default instance, with a placeholder in each required attribute the mapping
    /// leaves empty (LoopKit's DeletedCarbObject policy fills CachedCarbObject's from elsewhere),
    /// and a plausible value for each policy function the corpus calls.
    final class StandIn: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            let instance = try mapping.createDestinationInstance(for: source)
            let version = mapping.destinationVersion
            guard let entity = version.entity(named: mapping.destinationEntity) else { return }
            for attribute in version.allAttributes(of: entity) where !attribute.isOptional && !attribute.isTransient
                && attribute.defaultValue == nil && instance[attribute.name] == .null {
                instance[attribute.name] = switch attribute.type {
                case .integer16, .integer32, .integer64: .int(0)
                case .decimal: .decimal("0")
                case .double, .float: .double(0)
                case .boolean: .bool(true)
                case .date: .date(Date(timeIntervalSince1970: 0))
                case .binaryData, .transformable: .bytes([])
                // From the source's key: the same in every run (CorpusOnlineMappingTests
                // compares an online run with an offline one).
                case .uuid: .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", source.primaryKey))!)
                case .string, .uri, .undefined: .string("stand-in")
                }
            }
        }

        func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value {
            switch selector {
            case "defaultIsActiveForBundleID:team:": return .bool(true)
            case "migrateIconURL": return .string("https://example.invalid/icon.png")
            case "migrateScreenshotURLs": return .bytes([])
            case "migrateIdentifier": return .string("identifier \(source.primaryKey)")
            case "defaultCoreIdentifierForGameType:": return .string("com.example.core")
            case "migrateSaveStateType:": return .int(1)
            default: throw PolicyError(message: "the stand-in has no policy function \(selector)")
            }
        }
    }

    /// AltStore's `defaultIsActiveForBundleID:team:` as a test can check it: each call must
    /// get the app's bundle identifier and its Team as an object (entity and key in the old
    /// store, nil for an app without a team); the app is active when its team's key is even.
    final class TeamParity: EntityMigrationPolicy {
        func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value {
            guard selector == "defaultIsActiveForBundleID:team:", arguments.count == 2,
                  case .value(let bundleID) = arguments[0], bundleID == source["bundleIdentifier"],
                  case .object(entity: "Team", let team) = arguments[1] else {
                throw PolicyError(message: "unexpected call \(selector) with \(arguments) for InstalledApp \(source.primaryKey)")
            }
            return .bool(team.map { $0 % 2 == 0 } ?? false)
        }
    }

    /// Issue 8.6: AltStore 4 -> 5 passes `$source.team`, a related object, to its policy
    /// function. The mapping model validates, and on a store holding rows the function gets
    /// each app's team and what it returns is stored.
    @Test func altStore4To5PassesEachAppsTeamToItsPolicyFunction() throws {
        let package = try #require(Self.packages.first { $0.path == "altstoreio__AltStore/AltStore4ToAltStore5.xcmappingmodel" })
        let (mapping, model) = try Corpus.load(package)
        #expect(MappingModelValidator.validate(mapping, model: model) == [])
        let registry = PolicyRegistry()
        registry.register("InstalledAppToInstalledAppMigrationPolicy") { TeamParity() }
        try TestDatabase.withFreshConnection { connection in
            try Corpus.check(mapping, of: model, in: package.path, on: connection, policies: registry)
            // The policy gives new keys: rows are matched by their unique bundle identifier.
            let apps = try connection.execute("""
                SELECT n.is_active::text AS active, o.team_pk::text AS team
                FROM \(ident: Corpus.store, "installed_app") AS n JOIN \(ident: Corpus.store + "~", "installed_app") AS o USING (bundle_identifier)
                """).rows
            #expect(apps.count == Corpus.rowsPerEntity)
            for app in apps {
                #expect(app[0] == (app[1].flatMap { Int64($0) }.map { $0 % 2 == 0 } ?? false ? "true" : "false"), "team \(app[1] ?? "none")")
            }
            #expect(Set(apps.map { $0[1] == nil ? "none" : Int64($0[1]!)! % 2 == 0 ? "even" : "odd" }) == ["none", "even", "odd"])
        }
    }

    /// What the apps guarantee and the generator does not, made true before applying.
    static let prepare: [String: [String]] = [
        // Delta 4 requires Cheat.name, optional in Delta 3; CheatToCheat copies it (set-based).
        "rileytestut__Delta/Delta3ToDelta4.xcmappingmodel": [#"UPDATE corpus_store.cheat SET name = 'cheat ' || _pk WHERE name IS NULL"#],
    ]

    /// Mapping models whose policies set what the destination requires, so stand-ins that set
    /// nothing fail stage 3's checks (as Core Data's validation would), the store left as it was.
    static let standInFailures: [String: String] = [
        // The app's two policies make each PersistedGroupDiscussion a contact group, Owned or
        // Joined, linked to its discussion (required in v6); stand-ins make both, unlinked.
        "olvid-io__olvid-ios/ObvMessengerMappingModel_v5_to_v6.xcmappingmodel":
            #"stage 3: persisted_contact_group.discussion_pk NOT NULL": ERROR 23502"#,
    ]

    static func policies(of mapping: MappingModel) -> Set<String> {
        Set(mapping.entityMappings.compactMap(\.policy))
    }

    @Test(arguments: packages)
    func withoutItsPoliciesTheMappingModelStopsAtPlanNamingThem(package: TestSupport.Corpus.MappingPackage) throws {
        let (mapping, model) = try Corpus.load(package)
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: mapping.source, store: Corpus.store, rows: 5, on: connection)
            var migrator = StoreMigrator(connection: connection, model: model, store: Corpus.store, targetVersion: mapping.destination, explicitMappings: [ExplicitMapping(mapping)])
            migrator.policies = PolicyRegistry()
            let plan = try migrator.plan()
            #expect(!plan.isExecutable, "\(package)")
            for policy in Self.policies(of: mapping) {
                #expect(plan.blockers.contains { $0.contains("custom policy '\(policy)' is not registered") }, "\(package): \(plan.blockers)")
            }
            #expect(throws: NotExecutable.self) { try migrator.apply() }
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(Corpus.store)").value(0, "version_name") == mapping.source)
        }
    }

    @Test(arguments: packages)
    func withStandInsRegisteredTheMappingModelApplies(package: TestSupport.Corpus.MappingPackage) throws {
        let (mapping, model) = try Corpus.load(package)
        let registry = PolicyRegistry()
        for policy in Self.policies(of: mapping) { registry.register(policy) { StandIn() } }
        try TestDatabase.withFreshConnection { connection in
            guard let reason = Self.standInFailures[package.path] else {
                try Corpus.check(mapping, of: model, in: package.path, on: connection, policies: registry) {
                    for statement in Self.prepare[package.path] ?? [] { try connection.execute(SQL(unsafeRaw: statement)) }
                }
                return
            }
            do {
                try Corpus.check(mapping, of: model, in: package.path, on: connection, policies: registry) {}
                Issue.record("\(package): applies with stand-ins now; remove it from standInFailures ('\(reason)')")
            } catch {
                #expect(String(describing: error).contains(reason), "\(package): fails otherwise than expected: \(error)")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(Corpus.store)").value(0, "version_name") == mapping.source)
            }
        }
    }
}
