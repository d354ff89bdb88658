/// A version a model lists but that cannot be used: its file could not be read, or it fails
/// validation. Each problem names the version's file.
public struct UnusableVersion: Sendable, Hashable {
    public var name: String
    public var issues: [ModelIssue]

    public init(name: String, issues: [ModelIssue]) {
        self.name = name
        self.issues = issues
    }
}

/// Commands check only the versions they need: a version's validation runs when a command is
/// about to use it, so a problem in another version never stops it.
extension VersionedModel {
    public func unusableVersion(named name: String) -> UnusableVersion? {
        unusableVersions.first { $0.name == name }
    }

    /// What keeps the version from being used: what kept its file from loading, else its
    /// validation errors (warnings do not). Empty when it can be used.
    public func problems(ofVersion name: String) -> [ModelIssue] {
        if let unusable = unusableVersion(named: name) { return unusable.issues }
        guard let version = version(named: name) else { return [] }
        return ModelValidator.validate(version).filter { $0.severity == .error }
    }

    /// The versions named must be usable: otherwise every problem of those that are not.
    public func requireUsable(_ names: [String]) throws {
        let issues = names.flatMap(problems(ofVersion:))
        if !issues.isEmpty { throw ModelLoadError(issues) }
    }

    /// The versions from `first` to `last` in migration order, both included, that cannot be used.
    public func unusableVersions(from first: String, to last: String) -> [UnusableVersion] {
        guard let start = versionNames.firstIndex(of: first), let end = versionNames.firstIndex(of: last), start <= end else { return [] }
        return versionNames[start...end].compactMap { name in
            let issues = problems(ofVersion: name)
            return issues.isEmpty ? nil : UnusableVersion(name: name, issues: issues)
        }
    }

    /// The usable version whose model hash is `modelHash`, if any; else the versions that could
    /// not be compared: those whose file could not be read, and those with that hash that fail
    /// validation (a store can never have been made by a version that cannot be created). The
    /// version named `name` is chosen first when it has that hash: versions differing only in
    /// what no hash covers (fetch indexes) share one.
    public func usableVersion(withModelHash modelHash: String, preferring name: String? = nil) -> (version: ModelVersion?, notCompared: [UnusableVersion]) {
        if let name, let named = version(named: name), problems(ofVersion: name).isEmpty, VersionHash.hashes(of: named).model == modelHash {
            return (named, [])
        }
        var invalid: [UnusableVersion] = []
        for version in versions where VersionHash.hashes(of: version).model == modelHash {
            let issues = problems(ofVersion: version.name)
            if issues.isEmpty { return (version, []) }
            invalid.append(UnusableVersion(name: version.name, issues: issues))
        }
        return (nil, unusableVersions + invalid)
    }

    /// The model with the versions that have errors in `issuesByVersion` (their validation) set
    /// aside with those errors.
    public func settingAside(issuesByVersion: [String: [ModelIssue]]) -> VersionedModel {
        var model = self
        model.versions = []
        var invalid: [String: UnusableVersion] = [:]
        for version in versions {
            let errors = (issuesByVersion[version.name] ?? []).filter { $0.severity == .error }
            if errors.isEmpty {
                model.versions.append(version)
            } else {
                invalid[version.name] = UnusableVersion(name: version.name, issues: errors)
            }
        }
        // Kept in migration order, so problems are listed oldest version first.
        model.unusableVersions = versionNames.compactMap { invalid[$0] ?? unusableVersion(named: $0) }
        return model
    }
}
