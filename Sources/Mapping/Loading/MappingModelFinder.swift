import Foundation
import ObjectModel

/// The mapping models found for a model, and the files passed over with a warning.
public struct FoundMappingModels: Sendable {
    public var mappingModels: [MappingModel]
    /// Files beside a native model that could not be read as mapping models: they may be
    /// anything, so they never stop a command.
    public var warnings: [MappingIssue]
}

/// Which mapping models a command uses for a model (docs/mapping-format.md, "Where mapping
/// models are found"). Whether each names versions of the model is checked afterwards
/// (`MappingModelValidator.versionIssues`), so a typo in a version name is never passed over.
public enum MappingModelFinder {
    /// Every mapping model in the folders the user named: a file that cannot be read is an error.
    public static func find(inDirectories directories: [String]) throws -> FoundMappingModels {
        FoundMappingModels(mappingModels: try MappingModelLoader.loadAll(directories: directories), warnings: [])
    }

    /// The mapping models beside a model; problems in files that are mapping models are
    /// errors, all listed together.
    public static func find(beside model: VersionedModel) throws -> FoundMappingModels {
        switch model.format {
        case .native: try findInNativeFolder(model)
        case .xcode: try findBesideXcodePackage(model)
        }
    }

    /// In a native model's folder, besides the manifest and the version files: every
    /// `.xcmappingmodel`, and every YAML/JSON file whose top level has `entityMappings`. A YAML or
    /// JSON file that cannot be read at all (not UTF-8, malformed) is a warning.
    static func findInNativeFolder(_ model: VersionedModel) throws -> FoundMappingModels {
        let versionFiles = Set(model.versionNames.flatMap { name in MappingModelLoader.nativeExtensions.map { "\(name).\($0)" } })
        let paths = try entries(of: model.path)
            .filter { !versionFiles.contains($0) && !MappingModelLoader.manifestNames.contains($0.lowercased()) }
            .map { (model.path as NSString).appendingPathComponent($0) }
        var warnings: [MappingIssue] = []
        let mappingModels = try MappingModelLoader.loadEach(paths) { path, error in
            let reason = (error as? MappingIssue).map { ($0.line.map { "line \($0): " } ?? "") + $0.message } ?? String(describing: error)
            warnings.append(MappingIssue(file: path, message: "passed over: cannot be read as a mapping model (\(reason))"))
        }
        return FoundMappingModels(mappingModels: mappingModels, warnings: warnings)
    }

    /// In the folder holding an Xcode model, only `.xcmappingmodel` packages, and of those only
    /// the ones that belong to this model: their model paths name its package, or both their
    /// versions are among its versions (a byte copy made for another package with the same
    /// version names). The others map another model's versions.
    static func findBesideXcodePackage(_ model: VersionedModel) throws -> FoundMappingModels {
        let folder = (model.path as NSString).deletingLastPathComponent
        let directory = folder.isEmpty ? "." : folder
        let package = xcodePackageName(model.path)
        var found = FoundMappingModels(mappingModels: [], warnings: [])
        var issues: [MappingIssue] = []
        for name in try entries(of: directory) where (name as NSString).pathExtension.lowercased() == "xcmappingmodel" {
            do {
                let mapping = try MappingModelLoader.load(path: (directory as NSString).appendingPathComponent(name))
                let namesPackage = package.map { package in mapping.modelPaths.contains { ($0 as NSString).pathComponents.contains(package) } } ?? false
                let namesVersions = model.versionNames.contains(mapping.source) && model.versionNames.contains(mapping.destination)
                if namesPackage || namesVersions { found.mappingModels.append(mapping) }
            } catch let error as MappingLoadError {
                issues += error.issues
            }
        }
        if !issues.isEmpty { throw MappingLoadError(issues) }
        return found
    }

    /// `…/Recipes.xcdatamodeld` (or a version inside it) -> `Recipes.xcdatamodeld`.
    static func xcodePackageName(_ path: String) -> String? {
        (path as NSString).pathComponents.last { $0.hasSuffix(".xcdatamodeld") }
    }

    /// The visible entries of a folder, by name.
    static func entries(of directory: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw MappingLoadError([MappingIssue(file: directory, message: "cannot read the folder beside the model")])
        }
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }
}
