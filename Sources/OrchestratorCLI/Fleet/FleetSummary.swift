import Engine
import JSONRendering

/// `fleet status`'s report: every store, and counts by status, version and server. The JSON
/// form is a public contract.
struct FleetSummary {
    var states: [FleetStoreState]
    var fleet: FleetFile
    var target: String

    func count(_ status: FleetStoreStatus, in states: [FleetStoreState]? = nil) -> Int {
        (states ?? self.states).filter { $0.status == status }.count
    }

    /// 1 on any error, 2 when some store is not at the target, 0 when all are.
    var checkExitCode: Int32? {
        if states.contains(where: \.status.isError) { return 1 }
        return states.allSatisfy { $0.status == .upToDate } ? 0 : 2
    }

    /// `9870 upToDate, 3 drifted`: the statuses present, in the order of `FleetStoreStatus`.
    func statusCounts(_ states: [FleetStoreState]) -> String {
        let parts = FleetStoreStatus.allCases.compactMap { status -> String? in
            let n = count(status, in: states)
            return n == 0 ? nil : "\(n) \(status.rawValue)"
        }
        return parts.isEmpty ? "no stores" : parts.joined(separator: ", ")
    }

    /// Stores by the version that made them, most first; nil (missing, unknown) last.
    var versionCounts: [(version: String?, count: Int)] {
        var counts: [String?: Int] = [:]
        for state in states where state.status != .unreachable { counts[state.version, default: 0] += 1 }
        return counts.map { ($0.key, $0.value) }.sorted { $0.count != $1.count ? $0.count > $1.count : ($0.version ?? "\u{10FFFF}") < ($1.version ?? "\u{10FFFF}") }
    }

    var servers: [String] { fleet.servers.map(\.name) }

    var textLines: [String] {
        var lines = ["fleet \(fleet.path): \(states.count) store\(states.count == 1 ? "" : "s") on \(servers.count) server\(servers.count == 1 ? "" : "s"), target '\(target)'"]
        lines.append("status: \(statusCounts(states))")
        lines.append("by version:")
        for (version, count) in versionCounts {
            lines.append("  \(count) at \(version.map { "'\($0)'" } ?? "no known version")\(version == target ? " (the target)" : "")")
        }
        lines.append("by server:")
        for server in servers {
            let own = states.filter { $0.store.server == server }
            lines.append("  \(server): \(statusCounts(own))")
        }
        let expanded = states.filter { $0.expansion != nil }
        if !expanded.isEmpty {
            lines.append("two versions live (apply --expand; fleet complete ends it): \(expanded.count) store\(expanded.count == 1 ? "" : "s")")
            lines += expanded.prefix(10).map { state in
                let expansion = state.expansion!
                // A heavyweight step's views serve its new version, read-only, beside the store's old one.
                if expansion.servesNewVersion(of: state.store.store) {
                    return "  \(state.store): '\(expansion.newVersion)' served \(expansion.writtenTables.isEmpty ? "read-only" : "written through its views") in \"\(expansion.viewsSchema)\" beside '\(state.version ?? expansion.oldVersion)'"
                }
                return "  \(state.store): '\(expansion.oldVersion)' served in \"\(expansion.viewsSchema)\" beside '\(state.version ?? expansion.newVersion)'"
            }
            if expanded.count > 10 { lines.append("  and \(expanded.count - 10) more") }
        }
        let notable = states.filter { $0.status != .upToDate && $0.status != .migrationRequired }
        if !notable.isEmpty {
            lines.append("stores needing attention:")
            lines += notable.map { "  \($0.store): \($0.status.rawValue)" + ($0.detail.map { ": \($0)" } ?? "") }
        }
        return lines
    }

    func json(model: String) -> JSONValue {
        let stores = states.map { state in
            JSONValue.object([
                ("server", .string(state.store.server)),
                ("store", .string(state.store.store)),
                ("version", state.version.map(JSONValue.string) ?? .null),
                ("status", .string(state.status.rawValue)),
                ("detail", state.detail.map(JSONValue.string) ?? .null),
            ] + (state.expansion.map { expansion in
                [("liveVersions", ExpandRendering.liveVersions(store: state.store.store, version: state.version, expansion: expansion))]
            } ?? []))
        }
        let byStatus = FleetStoreStatus.allCases.map { ($0.rawValue, JSONValue.number(count($0))) }
        let byVersion = versionCounts.map { JSONValue.object([("version", $0.version.map(JSONValue.string) ?? .null), ("stores", .number($0.count))]) }
        let byServer = servers.map { server in
            let own = states.filter { $0.store.server == server }
            return JSONValue.object([("server", .string(server)), ("stores", .number(own.count))]
                + FleetStoreStatus.allCases.map { ($0.rawValue, JSONValue.number(count($0, in: own))) })
        }
        return .object([
            ("fleet", .string(fleet.path)),
            ("model", .string(model)),
            ("target", .string(target)),
            ("stores", .array(stores)),
            ("summary", .object([
                ("stores", .number(states.count)),
                ("byStatus", .object(byStatus)),
                ("byVersion", .array(byVersion)),
                ("byServer", .array(byServer)),
                ("twoVersionsLive", .number(states.filter { $0.expansion != nil }.count)),
            ])),
        ])
    }
}
