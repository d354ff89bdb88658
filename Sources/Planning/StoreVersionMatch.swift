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
    /// The store's hash is the target's, but its version is another one whose layout differs:
    /// versions can differ in what no hash covers, fetch indexes (Core Data leaves them out of
    /// `versionHash`). The store lacks the target's indexes, or has ones it dropped: a step is
    /// due, though the two are compatible.
    public var indexesDiffer = false

    /// Compatible, and the store has the target's layout: nothing to do.
    public var isAtTarget: Bool { isCompatible && !indexesDiffer }

    /// 1. A usable version in the model's files with the store's hash: the one the store's
    ///    metadata names (`storeVersionName`) when it has that hash, since several versions can
    ///    share a hash (they differ only in fetch indexes); else the first.
    /// 2. Else the database's record of applied versions (newest first).
    /// 3. Else no version, with the versions that could not be compared.
    /// With `target`, a compatible store at another version is compared with it by layout
    /// (`indexesDiffer`).
    public init(
        storeModelHash: String, storeVersionName: String? = nil, targetModelHash: String, target: ModelVersion? = nil,
        model: VersionedModel, recordedVersions: [RecordedVersion]
    ) {
        isCompatible = storeModelHash == targetModelHash
        isRecordedOnly = false
        notCompared = []
        let match = model.usableVersion(withModelHash: storeModelHash, preferring: storeVersionName)
        if let version = match.version {
            versionName = version.name
        } else if let recorded = recordedVersions.first(where: { $0.modelHash == storeModelHash }) {
            versionName = recorded.name
            isRecordedOnly = true
        } else {
            versionName = nil
            notCompared = match.notCompared
        }
        if isCompatible, let target, let version = match.version, version.name != target.name {
            indexesDiffer = StoreLayout(version: version, schema: "s") != StoreLayout(version: target, schema: "s")
        }
    }
}
