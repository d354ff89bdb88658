import Foundation

/// Reads Xcode `.xcdatamodeld` packages (and single `.xcdatamodel` folders) directly.
///
/// Real files have quirks (see the corpus README): they are read leniently, each tolerated
/// quirk becomes a warning on the versioned model, and nothing here crashes on odd input.
public enum XcodeModelLoader {
    /// A version of an `.xcdatamodeld` whose `contents` cannot be read is set aside in
    /// `unusableVersions`; a single `.xcdatamodel` that cannot be read throws.
    public static func load(package path: String) throws -> VersionedModel {
        let fm = FileManager.default
        let packageName = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        if path.hasSuffix(".xcdatamodel") {
            var warnings: [ModelIssue] = []
            let version = try loadVersion(at: path, warnings: &warnings)
            return VersionedModel(
                name: packageName, versions: [version], currentVersionName: version.name, path: path, format: .xcode, warnings: warnings, orderIsDeclared: true
            )
        }
        guard let children = try? fm.contentsOfDirectory(atPath: path) else {
            throw ModelLoadError([ModelIssue(file: path, message: "cannot read the .xcdatamodeld package")])
        }
        let versionFolders = children.filter { $0.hasSuffix(".xcdatamodel") }.sorted {
            naturalOrder(($0 as NSString).deletingPathExtension, ($1 as NSString).deletingPathExtension)
        }
        guard !versionFolders.isEmpty else {
            throw ModelLoadError([ModelIssue(file: path, message: "the package holds no .xcdatamodel version")])
        }
        var warnings: [ModelIssue] = []
        var unusable: [UnusableVersion] = []
        var versions: [ModelVersion] = []
        for folder in versionFolders {
            do {
                versions.append(try loadVersion(at: (path as NSString).appendingPathComponent(folder), warnings: &warnings))
            } catch let issue as ModelIssue {
                unusable.append(UnusableVersion(name: (folder as NSString).deletingPathExtension, issues: [issue]))
            }
        }
        var names = versionFolders.map { ($0 as NSString).deletingPathExtension }
        let declared = try XcodeVersionOrder.declared(forPackage: path, versionNames: names)
        if let declared {
            names = declared
            versions.sort { declared.firstIndex(of: $0.name)! < declared.firstIndex(of: $1.name)! }
        }
        let current = currentVersionName(package: path, versionNames: names, warnings: &warnings)
        return VersionedModel(
            name: packageName, versions: versions, currentVersionName: current, path: path, format: .xcode, warnings: warnings,
            unusableVersions: unusable, versionNames: names, orderIsDeclared: declared != nil
        )
    }

    /// `.xccurrentversion` names the current version with its `.xcdatamodel` extension; without
    /// it (single-version bundles), the last version in order is current.
    static func currentVersionName(package path: String, versionNames: [String], warnings: inout [ModelIssue]) -> String {
        let file = (path as NSString).appendingPathComponent(".xccurrentversion")
        let fallback = versionNames.last!
        guard let data = FileManager.default.contents(atPath: file) else {
            if versionNames.count > 1 {
                warnings.append(ModelIssue(.warning, file: path, message: "no .xccurrentversion; '\(fallback)', the last version, is current"))
            }
            return fallback
        }
        guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
              let named = plist["_XCCurrentVersionName"] as? String
        else {
            warnings.append(ModelIssue(.warning, file: file, message: "unreadable; '\(fallback)', the last version, is current"))
            return fallback
        }
        let name = (named as NSString).deletingPathExtension
        guard versionNames.contains(name) else {
            warnings.append(ModelIssue(.warning, file: file, message: "names '\(named)', which is not in the package; '\(fallback)' is current"))
            return fallback
        }
        return name
    }

    /// "Model 9" < "Model 10"; "Model" < "Model 2".
    public static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let left = chunks(a), right = chunks(b)
        for (x, y) in zip(left, right) where x != y {
            if let nx = Int(x), let ny = Int(y), nx != ny { return nx < ny }
            return x < y
        }
        return left.count < right.count
    }

    private static func chunks(_ s: String) -> [String] {
        var result: [String] = []
        var current = ""
        var currentIsDigit: Bool?
        for c in s {
            let isDigit = c.isASCII && c.isNumber
            if let flag = currentIsDigit, flag != isDigit {
                result.append(current)
                current = ""
            }
            current.append(c)
            currentIsDigit = isDigit
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    public static func loadVersion(at folder: String, warnings: inout [ModelIssue]) throws -> ModelVersion {
        let name = ((folder as NSString).lastPathComponent as NSString).deletingPathExtension
        let file = (folder as NSString).appendingPathComponent("contents")
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ModelIssue(file: file, message: "missing: this version has no 'contents' XML (models older than Xcode 4 are not supported)")
        }
        return try parseContents(data, name: name, file: file, warnings: &warnings)
    }

    public static func parseContents(_ data: Data, name: String, file: String, warnings: inout [ModelIssue]) throws -> ModelVersion {
        let root = try XMLTree.parse(data, file: file)
        guard root.name == "model" else {
            throw ModelIssue(file: file, message: "not a Core Data model: the root element is not <model>")
        }
        var version = ModelVersion(name: name, entities: [], sourceFile: file)
        if let identifier = root.attribute("userDefinedModelVersionIdentifier"), !identifier.isEmpty {
            version.versionIdentifiers = [identifier]
        }
        version.entities = try root.elements(forName: "entity").map { try parseEntity($0, file: file, warnings: &warnings) }
        return version
    }

    static func parseEntity(_ element: XMLTree, file: String, warnings: inout [ModelIssue]) throws -> Entity {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelIssue(file: file, message: "an <entity> has no name")
        }
        var entity = Entity(
            name: name,
            parent: element.attribute("parentEntity"),
            isAbstract: element.flag("isAbstract"),
            className: element.attribute("representedClassName"),
            renamingIdentifier: element.attribute("elementID"),
            versionHashModifier: element.attribute("versionHashModifier"),
            userInfo: userInfo(of: element)
        )
        for child in element.elements(forName: "attribute") {
            entity.attributes.append(try parseAttribute(child, entity: name, file: file, warnings: &warnings))
        }
        for child in element.elements(forName: "relationship") {
            entity.relationships.append(try parseRelationship(child, entity: name, file: file))
        }
        for constraints in element.elements(forName: "uniquenessConstraints") {
            for constraint in constraints.elements(forName: "uniquenessConstraint") {
                entity.uniquenessConstraints.append(constraint.elements(forName: "constraint").compactMap { $0.attribute("value") })
            }
        }
        for index in element.elements(forName: "fetchIndex") {
            let properties = index.elements(forName: "fetchIndexElement").compactMap { $0.attribute("property") }
            entity.indexes.append(FetchIndex(name: index.attribute("name") ?? "index", properties: properties))
        }
        for compound in element.elements(forName: "compoundIndexes") {
            for (number, index) in compound.elements(forName: "compoundIndex").enumerated() {
                let properties = index.elements(forName: "index").compactMap { $0.attribute("value") }
                entity.indexes.append(FetchIndex(name: "compoundIndex\(number + 1)", properties: properties))
            }
        }
        return entity
    }

    static func parseAttribute(_ element: XMLTree, entity: String, file: String, warnings: inout [ModelIssue]) throws -> Attribute {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelIssue(file: file, entity: entity, message: "an <attribute> has no name")
        }
        var attribute = Attribute(name: name, type: .undefined)
        readPropertyFields(of: element, into: &attribute)
        if let spelling = element.attribute("attributeType") {
            guard let type = AttributeType(spelling: spelling) else {
                throw ModelIssue(file: file, entity: entity, property: name, message: "unknown attributeType '\(spelling)'")
            }
            attribute.type = type
        }
        if let seconds = element.attribute("defaultDateTimeInterval") {
            attribute.defaultValue = seconds
        } else if let text = element.attribute("defaultValueString") {
            attribute.defaultValue = lenientDefault(text, for: attribute, entity: entity, file: file, warnings: &warnings)
        }
        return attribute
    }

    /// Real files carry defaults that do not match their type ("NO" on integers, "0.0" on
    /// Integer 64; Xcode keeps a Boolean's "YES" when its type becomes a number). Core Data
    /// reads them as numbers (NO 0, YES 1); so do we, with a warning. A default that cannot be
    /// read at all is dropped, with a warning.
    static func lenientDefault(_ text: String, for attribute: Attribute, entity: String, file: String, warnings: inout [ModelIssue]) -> String? {
        if attribute.type == .undefined || DefaultValue.parse(text, as: attribute.type) != nil {
            return text
        }
        func warn(_ message: String) {
            warnings.append(ModelIssue(.warning, file: file, entity: entity, property: attribute.name, message: message))
        }
        if attribute.type.isInteger || [.decimal, .double, .float].contains(attribute.type) {
            let converted: String? = switch text.lowercased() {
            case "no", "false": "0"
            case "yes", "true": "1"
            default: Double(text).flatMap { $0.rounded() == $0 && abs($0) < 9.2e18 ? String(Int64($0)) : nil }
            }
            if let converted {
                warn("default '\(text)' on \(attribute.type.rawValue) read as \(converted)")
                return converted
            }
        }
        warn("default '\(text)' does not parse as \(attribute.type.rawValue); ignored")
        return nil
    }

    static func parseRelationship(_ element: XMLTree, entity: String, file: String) throws -> Relationship {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelIssue(file: file, entity: entity, message: "a <relationship> has no name")
        }
        let isToMany = element.flag("toMany")
        let deleteRule: DeleteRule
        if let spelling = element.attribute("deletionRule") {
            guard let rule = DeleteRule(spelling: spelling) else {
                throw ModelIssue(file: file, entity: entity, property: name, message: "unknown deletionRule '\(spelling)'")
            }
            deleteRule = rule
        } else {
            deleteRule = .nullify
        }
        var relationship = Relationship(
            name: name,
            destination: element.attribute("destinationEntity") ?? "",
            inverse: element.attribute("inverseName"),
            isToMany: isToMany,
            isOrdered: element.flag("ordered"),
            minCount: element.attribute("minCount").flatMap { Int($0) } ?? 0,
            maxCount: element.attribute("maxCount").flatMap { Int($0) } ?? (isToMany ? 0 : 1),
            deleteRule: deleteRule
        )
        readPropertyFields(of: element, into: &relationship)
        return relationship
    }

    /// What every `<attribute>` and `<relationship>` carries: flags, `elementID`, hash modifier, user info.
    static func readPropertyFields(of element: XMLTree, into property: inout some PropertyDescription) {
        property.isOptional = element.flag("optional")
        property.isTransient = element.flag("transient")
        property.isReadOnly = element.flag("readOnly")
        property.renamingIdentifier = element.attribute("elementID")
        property.versionHashModifier = element.attribute("versionHashModifier")
        property.userInfo = userInfo(of: element)
    }

    static func userInfo(of element: XMLTree) -> [String: String] {
        var result: [String: String] = [:]
        for info in element.elements(forName: "userInfo") {
            for entry in info.elements(forName: "entry") {
                if let key = entry.attribute("key") { result[key] = entry.attribute("value") ?? "" }
            }
        }
        return result
    }
}
