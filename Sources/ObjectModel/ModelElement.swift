/// What entities and properties share, as Core Data's NSEntityDescription and
/// NSPropertyDescription do: the name they are matched by across versions and the fields read
/// alike for each of them.
public protocol ModelElement: Sendable, Hashable {
    var name: String { get }
    var renamingIdentifier: String? { get set }
    var versionHashModifier: String? { get set }
    var userInfo: [String: String] { get set }
}

extension ModelElement {
    /// The name used to match this element across versions.
    public var canonicalName: String { renamingIdentifier ?? name }
}

/// What attributes and relationships share: their flags, read by the loaders and hashed by
/// `VersionHash` in one place for both.
public protocol PropertyDescription: ModelElement {
    var isOptional: Bool { get set }
    var isTransient: Bool { get set }
    var isReadOnly: Bool { get set }
}
