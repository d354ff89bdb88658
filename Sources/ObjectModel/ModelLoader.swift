import Foundation

/// Loads a versioned model from a native folder, an `.xcdatamodeld` package or a single
/// `.xcdatamodel`.
public enum ModelLoader {
    /// Loads every version; throws every problem found in any of them.
    public static func load(path: String) throws -> VersionedModel {
        let model = try loadEachVersion(path: path)
        try model.requireUsable(model.versionNames)
        return model
    }

    /// Loads, then validates every version; throws every problem found.
    public static func loadValidated(path: String) throws -> VersionedModel {
        let model = try load(path: path)
        let issues = model.versions.flatMap(ModelValidator.validate)
        if !issues.isEmpty { throw ModelLoadError(issues) }
        return model
    }

    /// What commands use: reads every version it can; a version whose file cannot be read is set
    /// aside with its problems in `unusableVersions`, and nothing is validated yet, so that a
    /// command checks only the versions it needs (`requireUsable`). Throws only when the model
    /// as a whole cannot be read (no manifest, no package).
    public static func loadEachVersion(path: String) throws -> VersionedModel {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: trimmed, isDirectory: &isDirectory) else {
            throw ModelLoadError([ModelIssue(file: trimmed, message: "no such file or folder")])
        }
        if trimmed.hasSuffix(".xcdatamodeld") || trimmed.hasSuffix(".xcdatamodel") {
            return try XcodeModelLoader.load(package: trimmed)
        }
        if isDirectory.boolValue && NativeModelLoader.isNativeModelFolder(trimmed) {
            return try NativeModelLoader.load(folder: trimmed)
        }
        throw ModelLoadError([ModelIssue(
            file: trimmed,
            message: "not a model: expected a versioned-model folder with model.yaml, or an .xcdatamodeld package"
        )])
    }
}
