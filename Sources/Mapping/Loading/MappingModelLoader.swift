import Foundation
import Yams

/// Finds and reads mapping models: native files (YAML or JSON, see docs/mapping-format.md) and
/// Xcode `.xcmappingmodel` packages.
public enum MappingModelLoader {
    static let nativeExtensions: Set<String> = ["yaml", "yml", "json"]
    static let manifestNames: Set<String> = ["model.yaml", "model.yml", "model.json"]

    /// Reads one mapping model, by extension: `.yaml`/`.yml`/`.json` native, `.xcmappingmodel`
    /// (or its `xcmapping.xml`) Xcode. Throws `MappingLoadError` listing every problem found.
    public static func load(path: String) throws -> MappingModel {
        let fileExtension = (path as NSString).pathExtension.lowercased()
        if fileExtension == "xcmappingmodel" || (path as NSString).lastPathComponent == "xcmapping.xml" {
            return try XcodeMappingLoader.load(package: path)
        }
        guard nativeExtensions.contains(fileExtension) else {
            throw MappingLoadError([MappingIssue(file: path, message: "not a mapping model: expected a .yaml, .yml, .json or .xcmappingmodel file")])
        }
        do {
            return try NativeMappingLoader.parse(try MappingYAMLReader.readText(path), file: path)
        } catch let issue as MappingIssue {
            throw MappingLoadError([issue])
        }
    }

    /// Every mapping model directly in each directory (not in subdirectories), by file name.
    ///
    /// Mapping folders often sit beside a native model, so a `.yaml`, `.yml` or `.json` file is a
    /// mapping model only when its top level has an `entityMappings` key; the model's manifest
    /// (`model.yaml`) and version files do not, and are skipped. Every `.xcmappingmodel` is read.
    /// Problems in all files are reported together.
    public static func loadAll(directories: [String]) throws -> [MappingModel] {
        var models: [MappingModel] = []
        var issues: [MappingIssue] = []
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                issues.append(MappingIssue(file: directory, message: "cannot read the mapping models directory"))
                continue
            }
            do {
                models += try loadEach(names.sorted().filter { !$0.hasPrefix(".") }.map { (directory as NSString).appendingPathComponent($0) })
            } catch let error as MappingLoadError {
                issues += error.issues
            }
        }
        if !issues.isEmpty { throw MappingLoadError(issues) }
        return models
    }

    /// Each path that is a mapping model, in order: every `.xcmappingmodel`, and every YAML/JSON
    /// file whose top level has `entityMappings` (`nativeMappingText`). The problems of all are
    /// reported together. A YAML/JSON file that cannot be read at all is one of them, unless
    /// `passOver` takes it (a warning beside a native model, where files may be anything).
    static func loadEach(_ paths: [String], passOver: ((_ path: String, _ error: any Error) -> Void)? = nil) throws -> [MappingModel] {
        var models: [MappingModel] = []
        var issues: [MappingIssue] = []
        for path in paths {
            do {
                if (path as NSString).pathExtension.lowercased() == "xcmappingmodel" {
                    models.append(try load(path: path))
                } else if let text = try nativeText(path, passOver: passOver) {
                    models.append(try NativeMappingLoader.parse(text, file: path))
                }
            } catch let error as MappingLoadError {
                issues += error.issues
            } catch let issue as MappingIssue {
                issues.append(issue)
            }
        }
        if !issues.isEmpty { throw MappingLoadError(issues) }
        return models
    }

    private static func nativeText(_ path: String, passOver: ((String, any Error) -> Void)?) throws -> String? {
        guard let passOver else { return try nativeMappingText(path) }
        do {
            return try nativeMappingText(path)
        } catch {
            passOver(path, error)
            return nil
        }
    }

    /// The text of the native mapping model at `path`; nil when it is none: not a YAML/JSON
    /// file, the model's manifest, or a document without `entityMappings` at its top level.
    /// Throws when the file cannot be read as YAML.
    static func nativeMappingText(_ path: String) throws -> String? {
        let name = (path as NSString).lastPathComponent
        guard nativeExtensions.contains((name as NSString).pathExtension.lowercased()), !manifestNames.contains(name.lowercased()) else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
        let text = try MappingYAMLReader.readText(path)
        if text.allSatisfy(\.isWhitespace) { return nil }
        let root = try MappingYAMLReader.compose(text, file: path)
        return root.mapping?.keys.contains { $0.scalar?.string == "entityMappings" } == true ? text : nil
    }
}
