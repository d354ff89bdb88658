import ArgumentParser
import Engine
import Foundation
import JSONRendering
import Planning

struct FleetPlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Group the stores to migrate into cohorts by (version hash -> target) and plan each cohort once.",
        discussion: """
            Each cohort is planned on its first store (its statements name that store's schema;
            every store of the cohort runs the same steps on its own). `fleet apply` plans each
            store again under its lock before it runs anything. Exit 1 when a cohort cannot be
            planned or its plan cannot run.
            """
    )

    @OptionGroup var options: FleetOptions
    @OptionGroup var mappingOptions: MappingOptions

    @Option(name: .long, help: ArgumentHelp("Also save the fleet plan (every cohort, its stores and its plan) as JSON.", valueName: "file"))
    var out: String?

    @Flag(name: .long, help: "Plan each cohort as `fleet apply --online` runs it, and save it for `fleet apply --online --plan FILE`.")
    var online = false

    @Flag(name: .long, help: "Plan each cohort as `fleet apply --expand` runs it (implies --online), and save it for `fleet apply --expand --plan FILE`.")
    var expand = false

    func run() throws {
        try reportingFailures {
            let (fleet, model, target) = try options.load()
            let explicitMappings = try mappingOptions.explicitMappings(for: model)
            let states = FleetSurvey.states(of: fleet, model: model, target: target) { try fleetConnect($0.connectionString) }
            var cohorts: [FleetCohort] = []
            for state in states where state.status == .migrationRequired || state.status == .missing {
                // By hash and version: versions differing only in fetch indexes share a hash.
                let key = state.modelHash ?? ""
                if let index = cohorts.firstIndex(where: { $0.modelHash == key && $0.from == state.version }) {
                    cohorts[index].stores.append(state.store)
                } else {
                    cohorts.append(FleetCohort(modelHash: key, from: state.version, stores: [state.store]))
                }
            }
            var failed = false
            for index in cohorts.indices {
                let first = cohorts[index].stores[0]
                guard let server = fleet.server(named: first.server) else { continue }
                do {
                    let connection = try fleetConnect(server.connectionString)
                    defer { connection.close() }
                    let migrator = StoreMigrator(connection: connection, model: model, store: first.store, targetVersion: target.name, explicitMappings: explicitMappings)
                    let plan = try migrator.plan(mode: expand ? .expand : online ? .online : .offline)
                    cohorts[index].plan = plan
                    cohorts[index].saved = try SavedPlan(plan: plan, migrator: migrator, online: online || expand, expand: expand)
                    failed = failed || !plan.isExecutable
                } catch {
                    cohorts[index].error = String(describing: error)
                    failed = true
                }
            }
            let others = states.filter { $0.status != .migrationRequired && $0.status != .missing }
            let mode: PlanMode = expand ? .expand : online ? .online : .offline
            let document = FleetPlanRendering.json(cohorts, others: others, target: target.name, fleet: fleet, mode: mode)
            if let out { try Data((document.rendered + "\n").utf8).write(to: URL(fileURLWithPath: out)) }
            switch options.format {
            case .json: printLine(document.rendered)
            case .text:
                FleetPlanRendering.text(cohorts, others: others, target: target.name, mode: mode).forEach { printLine($0) }
                let flags = expand ? "--expand " : online ? "--online " : ""
                if let out { printLine("fleet plan saved to \(out): run it with fleet apply \(flags)--plan \(out)") }
            }
            if failed { throw ExitCode.failure }
        }
    }
}

/// Stores at one version (by model hash; none for stores to create), planned once.
struct FleetCohort {
    var modelHash: String
    var from: String?
    var stores: [FleetStore]
    var plan: MigrationPlan?
    /// The plan as `plan --out` saves it, which `fleet apply --plan` compares each store's with.
    var saved: SavedPlan?
    var error: String?
}

enum FleetPlanRendering {
    static func text(_ cohorts: [FleetCohort], others: [FleetStoreState], target: String, mode: PlanMode) -> [String] {
        let total = cohorts.reduce(0) { $0 + $1.stores.count }
        var lines = ["fleet plan: \(total) store\(total == 1 ? "" : "s") to bring to '\(target)' in \(cohorts.count) cohort\(cohorts.count == 1 ? "" : "s")"]
        for (number, cohort) in cohorts.enumerated() {
            lines.append("")
            let from = cohort.from.map { "at '\($0)' (model hash \(cohort.modelHash))" } ?? "to create"
            lines.append("cohort \(number + 1) of \(cohorts.count): \(cohort.stores.count) store\(cohort.stores.count == 1 ? "" : "s") \(from) -> '\(target)', planned on \(cohort.stores[0])")
            if let error = cohort.error { lines.append("cannot plan: \(error)") }
            if let plan = cohort.plan {
                var planLines = PlanRendering.text(plan)
                if mode.runsOnline { planLines += OnlinePlanRendering.text(plan) }
                if mode == .expand { planLines += ExpandRendering.text(plan) }
                lines += planLines.map { $0.isEmpty ? $0 : "  " + $0 }
                let hazards = Set(plan.steps.flatMap(\.hazards).map { "\($0.code)" }).sorted()
                lines.append("  hazards: \(hazards.isEmpty ? "none" : hazards.joined(separator: ", "))")
            }
        }
        let counts = Dictionary(grouping: others, by: \.status).map { "\($0.value.count) \($0.key.rawValue)" }.sorted()
        if !counts.isEmpty { lines.append(""); lines.append("not in a cohort: \(counts.joined(separator: ", "))") }
        return lines
    }

    /// `mode` is written only when the plan runs online (`"online"`, `"expand"`), so a plan
    /// made without either prints as before.
    static func json(_ cohorts: [FleetCohort], others: [FleetStoreState], target: String, fleet: FleetFile, mode: PlanMode) -> JSONValue {
        var fields: [(String, JSONValue)] = [("fleet", .string(fleet.path)), ("target", .string(target))]
        if mode.runsOnline { fields.append(("mode", .string(mode.rawValue))) }
        fields.append(("cohorts", .array(cohorts.map { cohortJSON($0, target: target, mode: mode) })))
        fields.append(("notInACohort", .array(others.map { .object([("store", .string($0.store.description)), ("status", .string($0.status.rawValue))]) })))
        return .object(fields)
    }

    /// A cohort's plan as `plan` (with the same `--online` or `--expand`) prints it as JSON.
    private static func cohortJSON(_ cohort: FleetCohort, target: String, mode: PlanMode) -> JSONValue {
        let plan: JSONValue
        switch (cohort.plan, mode) {
        case (nil, _): plan = .null
        case (let planned?, .expand): plan = ExpandRendering.json(planned)
        case (let planned?, .online): plan = OnlinePlanRendering.json(planned)
        case (let planned?, .offline): plan = PlanRendering.json(planned)
        }
        return .object([
            ("from", cohort.from.map(JSONValue.string) ?? .null),
            ("modelHash", cohort.modelHash.isEmpty ? .null : .string(cohort.modelHash)),
            ("to", .string(target)),
            ("storeCount", .number(cohort.stores.count)),
            ("stores", .array(cohort.stores.map { .string($0.description) })),
            ("plannedOn", .string(cohort.stores[0].description)),
            ("plan", plan),
            ("savedPlan", cohort.saved.map { JSONValue(encoded: $0.encoded()) } ?? .null),
            ("error", cohort.error.map(JSONValue.string) ?? .null),
        ] + (mode.runsOnline ? [("phaseDigests", cohort.plan.map { .array(FleetPlanFile.phaseDigests(of: $0).map { $0.map(JSONValue.string) ?? .null }) } ?? .null)] : []))
    }
}

extension JSONValue {
    /// The JSON document `data` (written by a JSONEncoder) as a value, keys sorted.
    init(encoded data: Data) {
        self.init(any: (try? JSONSerialization.jsonObject(with: data)) ?? NSNull())
    }

    init(any value: Any) {
        switch value {
        case let string as String: self = .string(string)
        // A JSON true or false comes back as an NSNumber of a char.
        case let number as NSNumber where String(cString: number.objCType) == "c": self = .bool(number.boolValue)
        case let number as NSNumber: self = Double(number.intValue) == number.doubleValue ? .number(number.intValue) : .decimal(number.doubleValue)
        case let bool as Bool: self = .bool(bool)
        case let array as [Any]: self = .array(array.map(JSONValue.init(any:)))
        case let object as [String: Any]: self = .object(object.keys.sorted().map { ($0, JSONValue(any: object[$0]!)) })
        default: self = .null
        }
    }
}
