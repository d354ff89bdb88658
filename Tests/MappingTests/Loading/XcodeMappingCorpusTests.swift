import Foundation
import Testing
import TestSupport
import ObjectModel
@testable import Mapping

/// The `.xcmappingmodel` packages in the shared corpus (`Corpus.mappingPackages`), loaded.
enum CorpusMappingModels {
    typealias Package = Corpus.MappingPackage
    static var packages: [Package] { Corpus.mappingPackages }

    static func load(_ path: String) throws -> MappingModel {
        try MappingModelLoader.load(path: Corpus.root + "/" + path)
    }
}

@Suite struct XcodeMappingCorpusTests {
    @Test func theCorpusHoldsThirtyOneMappingModelsAllIndexed() {
        #expect(CorpusMappingModels.packages.count == 31, "expected the corpus at \(Corpus.root)")
        #expect(CorpusMappingModels.packages.allSatisfy { $0.indexedSource != nil && $0.indexedDestination != nil })
    }

    @Test(arguments: CorpusMappingModels.packages)
    func everyMappingModelImportsWithTheIndexedVersions(package: CorpusMappingModels.Package) throws {
        let model = try MappingModelLoader.load(path: package.fullPath)
        #expect(model.source == package.indexedSource)
        #expect(model.destination == package.indexedDestination)
        #expect(!model.entityMappings.isEmpty)
        #expect(Set(model.entityMappings.map(\.name)).count == model.entityMappings.count, "entity mapping names are unique")
        for mapping in model.entityMappings {
            switch mapping.type {
            case .add: #expect(mapping.sourceEntity == nil && mapping.destinationEntity != nil)
            case .remove: #expect(mapping.sourceEntity != nil && mapping.destinationEntity == nil)
            case .copy, .transform: #expect(mapping.sourceEntity != nil && mapping.destinationEntity != nil)
            case .custom: #expect(mapping.sourceEntity == nil && mapping.destinationEntity == nil)
            }
        }
    }

    /// Issue 8: every mapping model validates (what `validate` checks: its versions and
    /// entities exist, every expression and filter type-checks against both versions, the
    /// entity mappings a native file would get included), against the bundle of its
    /// repository holding both versions, loaded as `validate` loads it.
    @Test(arguments: CorpusMappingModels.packages)
    func everyMappingModelValidatesAgainstTheVersionsItMaps(package: CorpusMappingModels.Package) throws {
        let mapping = try MappingModelLoader.load(path: package.fullPath)
        let bundle = try #require(Corpus.bundles.first {
            $0.repository == package.repository && $0.versions.contains(mapping.source) && $0.versions.contains(mapping.destination)
        }, "\(package): no bundle has versions '\(mapping.source)' and '\(mapping.destination)'")
        let model = try ModelLoader.load(path: bundle.fullPath)
        #expect(MappingModelValidator.validate(mapping, model: model) == [], "\(package)")
    }

    /// Every stored value expression in the corpus, decoded; each read against what its
    /// mapping obviously does (a renamed attribute, a constant for a new attribute, a policy
    /// function given the source values it needs).
    static let decodedExpressions: [(package: String, entityMapping: String, property: String, text: String)] = [
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "AppPermissionToAppPermission", "appBundleID", "$source.app.bundleIdentifier"),
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "AppPermissionToAppPermission", "permission", "$source.type"),
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "AppPermissionToAppPermission", "sourceID", "$source.app.source.identifier"),
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "AppPermissionToAppPermission", "type", #""privacy""#),
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "AppVersionToAppVersion", "buildVersion", #""""#),
        ("altstoreio__AltStore/AltStore12ToAltStore13.xcmappingmodel", "InstalledAppToInstalledApp", "buildVersion", #""1""#),
        ("altstoreio__AltStore/AltStore2ToAltStore3.xcmappingmodel", "InstalledAppToInstalledApp", "installedDate", "$source.refreshedDate"),
        ("altstoreio__AltStore/AltStore4ToAltStore5.xcmappingmodel", "InstalledAppToInstalledApp", "isActive",
         #"FUNCTION($entityPolicy, "defaultIsActiveForBundleID:team:", $source.bundleIdentifier, $source.team)"#),
        ("altstoreio__AltStore/AltStore5ToAltStore6.xcmappingmodel", "NewsItemToNewsItem", "sourceIdentifier", #""com.rileytestut.AltStore""#),
        ("altstoreio__AltStore/AltStore5ToAltStore6.xcmappingmodel", "StoreAppToStoreApp", "sourceIdentifier", #""com.rileytestut.AltStore""#),
        ("altstoreio__AltStore/AltStoreToAltStore2.xcmappingmodel", "StoreAppToStoreApp", "iconURL", #"FUNCTION($entityPolicy, "migrateIconURL")"#),
        ("altstoreio__AltStore/AltStoreToAltStore2.xcmappingmodel", "StoreAppToStoreApp", "screenshotURLs", #"FUNCTION($entityPolicy, "migrateScreenshotURLs")"#),
        ("olvid-io__olvid-ios/ObvMessengerMappingModel_v5_to_v6.xcmappingmodel", "PersistedGroupDiscussionToPersistedContactGroupJoined", "groupName", "$source.title"),
        ("olvid-io__olvid-ios/ObvMessengerMappingModel_v5_to_v6.xcmappingmodel", "PersistedGroupDiscussionToPersistedContactGroupOwned", "groupName", "$source.title"),
        ("rileytestut__Delta/Delta3ToDelta4.xcmappingmodel", "GameControllerInputMappingToGameControllerInputMapping", "identifier",
         #"FUNCTION($entityPolicy, "migrateIdentifier")"#),
        ("rileytestut__Delta/Delta5ToDelta6.xcmappingmodel", "SaveStateToSaveState", "coreIdentifier",
         #"FUNCTION($entityPolicy, "defaultCoreIdentifierForGameType:", $source.game.type)"#),
        ("rileytestut__Delta/DeltaToDelta2.xcmappingmodel", "SaveStateToSaveState", "type", #"FUNCTION($entityPolicy, "migrateSaveStateType:", $source.type)"#),
        // Threema's message entity split into sub-entities: Xcode's expression for a
        // relationship whose entity mapping it names, and a new Boolean set to NO. The
        // ThreemaDataEncrypted package is a byte copy of ThreemaData's.
        ("threema-ch__threema-ios/ThreemaData.xcmappingmodel", "MessageToTextMessage", "conversation",
         #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ConversationToConversation", $source.conversation)"#),
        ("threema-ch__threema-ios/ThreemaData.xcmappingmodel", "MessageToTextMessage", "sendFailed", "NO"),
        ("threema-ch__threema-ios/ThreemaDataEncrypted.xcmappingmodel", "MessageToTextMessage", "conversation",
         #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ConversationToConversation", $source.conversation)"#),
        ("threema-ch__threema-ios/ThreemaDataEncrypted.xcmappingmodel", "MessageToTextMessage", "sendFailed", "NO"),
        ("woocommerce__woocommerce-ios/WooCommerceModelV9toV10.xcmappingmodel", "OrderToOrder", "statusKey", "$source.status"),
    ]

    @Test func everyStoredValueExpressionDecodesToThePinnedText() throws {
        var found: [String] = []
        for package in CorpusMappingModels.packages {
            for mapping in try CorpusMappingModels.load(package.path).entityMappings {
                for property in mapping.attributeMappings + mapping.relationshipMappings {
                    if let text = property.valueExpression {
                        found.append([package.path, mapping.name, property.name, text].joined(separator: " | "))
                    }
                }
            }
        }
        #expect(found.sorted() == Self.decodedExpressions.map { [$0.package, $0.entityMapping, $0.property, $0.text].joined(separator: " | ") }.sorted())
    }

    @Test func everyDecodedExpressionParsesAsAnNSExpression() {
        for pinned in Self.decodedExpressions {
            #expect(throws: Never.self, "\(pinned.package) \(pinned.entityMapping).\(pinned.property)") {
                try ExpressionParser.parseExpression(pinned.text)
            }
        }
    }

    @Test func twelveEntityMappingsNameTenCustomPolicyClasses() throws {
        let policies = try CorpusMappingModels.packages.flatMap { try CorpusMappingModels.load($0.path).entityMappings.compactMap(\.policy) }
        #expect(policies.count == 12)
        #expect(Set(policies) == [
            "GameControllerInputMappingMigrationPolicy",
            "InstalledAppToInstalledAppMigrationPolicy",
            "LoopKit.CachedCarbObjectv3EntityMigrationPolicy",
            "LoopKit.DeletedCarbObjectv3EntityMigrationPolicy",
            "PersistedGroupDiscussionToPersistedContactGroupJoinedMigrationPolicyV5ToV6",
            "PersistedGroupDiscussionToPersistedContactGroupOwnedMigrationPolicyV5ToV6",
            "SaveStateToSaveStateMigrationPolicy",
            "Source13To14MigrationPolicy",
            "StoreApp10ToStoreApp11Policy",
            "StoreAppToStoreAppMigrationPolicy",
        ])
    }

    @Test func entityMappingsAreCountedByTheTypeDerivedForThem() throws {
        var counts: [EntityMappingType: Int] = [:]
        for package in CorpusMappingModels.packages {
            for mapping in try CorpusMappingModels.load(package.path).entityMappings { counts[mapping.type, default: 0] += 1 }
        }
        #expect(counts == [.copy: 289, .transform: 20, .add: 18, .custom: 1])
    }

    @Test func leftoverObjectsXcodeNeverDeletedAreIgnored() throws {
        // LoopKit's file holds 22 entity mappings, of which the mapping model lists 6; the rest
        // have no mapping model, and one is a DeletedCarbObject mapping with a stored name.
        let model = try CorpusMappingModels.load("LoopKit__LoopKit/Modelv1v4.xcmappingmodel")
        #expect(model.entityMappings.map(\.name) == [
            "ReservoirToReservoir", "PumpEventToPumpEvent", "CachedGlucoseObjectToCachedGlucoseObject",
            "CachedInsulinDeliveryObjectToCachedInsulinDeliveryObject", "CachedCarbObjectToCachedCarbObject",
            "DeletedCarbObjectToCachedCarbObject",
        ])
        // Delta 4 -> 5 holds Xcode's blank "Mapping", naming no entity: read as a custom mapping.
        let blank = try #require(try CorpusMappingModels.load("rileytestut__Delta/Delta4ToDelta5.xcmappingmodel").entityMappings.first { $0.name == "Mapping" })
        #expect(blank == EntityMappingDefinition(name: "Mapping", type: .custom, sourceEntity: nil, destinationEntity: nil))
    }
}
