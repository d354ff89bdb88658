import Engine

/// What `orchestrator --version` prints: the tool's release, and the layout of the metadata
/// (the `orchestrator` schema, docs/store-format.md) it writes, which changes less often.
public enum ToolVersion {
    /// The release; bumped with every release (docs/development.md).
    public static let release = "0.1.0"

    public static var line: String {
        "orchestrator \(release) (writes metadata layout version \(MetadataSchema.layoutVersion))"
    }
}
