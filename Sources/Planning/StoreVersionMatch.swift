import ObjectModel

/// Which version made a store, found by its model hash (Core Data's
/// `isConfiguration:compatibleWithStoreMetadata:`): the one check `plan` and `status` share.
public struct StoreVersionMatch: Sendable, Hashable {
    /// The version whose model hash is the store's; nil when none is known.
    public var versionName: String?
    /// The version is known only from the database's record of applied versions.
    public var isRecordedOnly: Bool
    /// The store's hash is the target version's.
    public var isCompatible: Bool
    /// Versions whose files could not be compared with the store's hash (nil `versionName` only).
    public var notCompared: [UnusableVersion]

    /// 1. A usable version in the model's files with the store's hash.
    /// 2. Else the database's record of applied versions (newest first).
    /// 3. Else no version, with the versions that could not be compared.
    public init(storeModelHash: String, targetModelHash: String, model: VersionedModel, recordedVersions: [RecordedVersion]) {
        isCompatible = storeModelHash == targetModelHash
        isRecordedOnly = false
        notCompared = []
        let match = model.usableVersion(withModelHash: storeModelHash)
        if let version = match.version {
            versionName = version.name
        } else if let recorded = recordedVersions.first(where: { $0.modelHash == storeModelHash }) {
            versionName = recorded.name
            isRecordedOnly = true
        } else {
            versionName = nil
            notCompared = match.notCompared
        }
    }
}
