import Foundation

/// The order of an `.xcdatamodeld`'s versions, declared by the team in a file beside the
/// package: `<Package>.versions.yaml` next to `<Package>.xcdatamodeld`.
///
/// Xcode records no order of versions (a store is migrated directly from whatever version made
/// it), so without this file orchestrator orders them by name, as a guess. A guess is wrong when
/// the model was renamed (`AppPartner 5` -> `AppFolio v1.4`): with a declared order, a chain can
/// go through the versions in between; without one, only direct steps do (docs/model-format.md,
/// "Order of versions").
///
/// ```yaml
/// versions:          # oldest first, every version of the package once
///   - AppPartner 5
///   - AppFolio v1.4
/// ```
public enum XcodeVersionOrder {
    /// `<folder>/<Package>.versions.yaml` for `<folder>/<Package>.xcdatamodeld`.
    public static func file(forPackage path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        return (folder as NSString).appendingPathComponent("\(name).versions.yaml")
    }

    /// The declared order, or nil when no file is there. It must name every version of the
    /// package exactly once, and nothing else: an error names the file, line and version.
    static func declared(forPackage path: String, versionNames: [String]) throws -> [String]? {
        let file = file(forPackage: path)
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        do {
            let reader = ModelYAMLReader(file: file)
            let root = try ModelYAMLReader.compose(try ModelYAMLReader.readText(file), file: file)
            var order: [String] = []
            for pair in try reader.mapping(root, what: "the order of versions", allowed: ["versions"]) {
                order = try reader.strings(pair.value, what: "versions")
                if let duplicate = order.first(where: { name in order.filter { $0 == name }.count > 1 }) {
                    throw reader.issue("version '\(duplicate)' is listed twice", at: pair.value)
                }
                if let unknown = order.first(where: { !versionNames.contains($0) }) {
                    throw reader.issue("'\(unknown)' is not a version of \((path as NSString).lastPathComponent) (its versions: \(versionNames.joined(separator: ", ")))", at: pair.value)
                }
                let missing = versionNames.filter { !order.contains($0) }
                if !missing.isEmpty {
                    throw reader.issue("every version must be listed, oldest first; missing: \(missing.joined(separator: ", "))", at: pair.value)
                }
            }
            guard !order.isEmpty else { throw reader.issue("needs 'versions', oldest first", at: root) }
            return order
        } catch let issue as ModelIssue {
            throw ModelLoadError([issue])
        }
    }
}
