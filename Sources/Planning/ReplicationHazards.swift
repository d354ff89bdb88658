import SQLBuilding

/// What a step does to the store's replication (docs/replication.md), as hazards with stable
/// codes (docs/cli-output.md). Tables are matched by name between the two versions' layouts,
/// and by a heavyweight step's entity mappings where the name changes (`StagedWork.renamedTables`).
public enum ReplicationHazards {
    /// A publication's membership of tables the step replaces is carried in the swap.
    public static let membershipCarried = "replicationMembershipCarried"
    /// A `FOR TABLE` publication names a table the step removes: it leaves the publication.
    public static let membershipLost = "replicationMembershipLost"
    /// A subscription's record of tables the step replaces is moved to the new tables.
    public static let subscriptionCarried = "replicationSubscriptionCarried"
    /// The store is a subscription target: its publisher must change with it.
    public static let subscriptionTarget = "replicationSubscriptionTarget"
    /// Columns a published table gains: subscribers must add them first.
    public static let columnsAddedFirst = "replicationColumnsAddedFirst"
    /// Columns a published table loses: subscribers drop them last.
    public static let columnsDroppedLast = "replicationColumnsDroppedLast"
    /// Rows the step writes in published tables reach the subscribers.
    public static let dataWrites = "replicationDataWrites"
    /// A `FOR ALL TABLES` publication also publishes orchestrator's own tables.
    public static let allTables = "replicationAllTables"
    /// ACCESS EXCLUSIVE locks replay on standbys and cancel their queries.
    public static let standbyLocks = "replicationStandbyLocks"
    /// Under `apply --online` the step creates work tables in the store's schema, which a
    /// `FOR TABLES IN SCHEMA` or `FOR ALL TABLES` publication publishes.
    public static let workTables = "replicationWorkTables"
    /// The step drops published columns beside a change no order of publisher and subscribers
    /// keeps fitting (a rename, a type change, a table dropped): `apply --subscriber`
    /// runs it only with `--allow-unordered-drop`.
    public static let unorderedDrop = "replicationUnorderedDrop"

    public static let codes = [
        membershipCarried, membershipLost, subscriptionCarried, subscriptionTarget, columnsAddedFirst, columnsDroppedLast, dataWrites, allTables, standbyLocks, workTables,
        unorderedDrop,
    ]

    /// The hazards of `step`, from `source`'s layout (nil for `create`) to `destination`'s.
    public static func hazards(of step: PlannedStep, source: StoreLayout?, destination: StoreLayout, topology: ReplicationTopology) -> [Hazard] {
        guard !topology.isEmpty, let source else { return [] }
        let store = destination.schema
        let name = { (table: String) in "\(store).\(table)" }
        let kept = Set(destination.tables.map(\.name))
        let replaced: [String] = step.kind == .heavyweight ? source.tables.map(\.name) : (step.phases?.rebuiltTables ?? [])
        let renamed = step.staged?.renamedTables ?? renamedInPlace(step, source: source, destination: destination)
        var hazards: [Hazard] = []
        for publication in topology.publications where publication.form != .allTables {
            let carried = publication.tables.filter { replaced.contains($0) && kept.contains($0) }
            if !carried.isEmpty {
                hazards.append(Hazard(code: membershipCarried, message: "publication \(publication.name) publishes \(carried.map(name).joined(separator: ", ")), which the step replaces: the new tables take their place in it in the swap's transaction"))
            }
            let moved = publication.tables.filter { !kept.contains($0) && renamed[$0] != nil }
            if !moved.isEmpty, publication.form == .tableList {
                let heavyweight = step.kind == .heavyweight
                let pairs = moved.map { "\(name($0)) (\(heavyweight ? "replaced by" : "renamed") \(renamed[$0]!.map(name).joined(separator: " and ")))" }
                let how = heavyweight ? "the new tables, of other names, take their place in it in the swap's transaction" : "a table renamed in place stays in it under its new name"
                hazards.append(Hazard(code: membershipCarried, message: "publication \(publication.name) publishes \(pairs.joined(separator: ", ")): \(how)"))
            }
            let lost = publication.tables.filter { !kept.contains($0) && renamed[$0] == nil }
            if !lost.isEmpty, publication.form == .tableList {
                hazards.append(Hazard(code: membershipLost, message: "publication \(publication.name) publishes \(lost.map(name).joined(separator: ", ")), which the step removes: it leaves the publication (its rows go with the removal, as --allow-data-loss says)"))
            }
        }
        for subscription in topology.subscriptions {
            let carried = subscription.tables.filter { replaced.contains($0) && kept.contains($0) }
            if !carried.isEmpty {
                hazards.append(Hazard(code: subscriptionCarried, message: "subscription \(subscription.name) writes into \(carried.map(name).joined(separator: ", ")), which the step replaces: its record moves to the new tables in the swap's transaction (a superuser's right)"))
            }
            hazards.append(Hazard(code: subscriptionTarget, message: "subscription \(subscription.name) writes into \(subscription.tables.map(name).joined(separator: ", ")): migrate this store with its publisher (apply --subscriber on the publisher), or its changes stop fitting"))
        }
        let published = Set(topology.publications.flatMap(\.tables))
        let before = Dictionary(source.tables.map { ($0.name, Set($0.columns.map(\.name))) }, uniquingKeysWith: { $1 })
        var added: [String] = [], dropped: [String] = []
        for table in destination.tables where published.contains(table.name) {
            guard let old = before[table.name] else { continue }
            added += table.columns.map(\.name).filter { !old.contains($0) }.map { "\(name(table.name)).\($0)" }
            dropped += old.subtracting(table.columns.map(\.name)).sorted().map { "\(name(table.name)).\($0)" }
        }
        if !added.isEmpty {
            hazards.append(Hazard(code: columnsAddedFirst, message: "published columns \(added.joined(separator: ", ")) are new: every subscriber must have them before the publisher's step (apply --subscriber adds them first)"))
        }
        if !dropped.isEmpty {
            hazards.append(Hazard(code: columnsDroppedLast, message: "published columns \(dropped.joined(separator: ", ")) go: subscribers drop them only after the publisher's step (apply --subscriber drops them last)"))
        }
        let written = writtenTables(step).filter(published.contains)
        if !written.isEmpty {
            hazards.append(Hazard(code: dataWrites, message: "the step writes rows of \(written.map(name).joined(separator: ", ")): the writes replicate to subscribers, which must not write the same rows themselves"))
        }
        let schemaPublished = topology.publications.contains { $0.form == .tablesInSchema }
        if let split = SubscriberSplit(step, published: published, schemaPublished: schemaPublished), split.replicated.isEmpty, split.dropsPublished, let other = split.unorderable {
            hazards.append(Hazard(code: unorderedDrop, message: "the step drops published columns and also \(other.summary): no order of the publisher's and the subscribers' steps keeps rows written at the publisher meanwhile fitting; apply --subscriber runs it only with --allow-unordered-drop, writes to the store's tables kept out during the step"))
        }
        if topology.publications.contains(where: { $0.form == .allTables }), step.kind == .heavyweight || !(step.phases?.rebuiltTables.isEmpty ?? true) {
            hazards.append(Hazard(code: allTables, message: "a FOR ALL TABLES publication also publishes the tables orchestrator builds beside the store (staging, change logs; each has a primary key, so the publisher never fails): a subscriber without them stops on their rows"))
        }
        // A table of the new version (a join table) is the store's, published as any other: not a work table.
        let work = tables(in: step.phases?.phases.flatMap(\.statements) ?? [], prefixes: ["CREATE TABLE "], store: store).filter { !kept.contains($0) }
        if !work.isEmpty, topology.publications.contains(where: { $0.form != .tableList }) {
            hazards.append(Hazard(code: workTables, message: "under apply --online the step creates \(work.map(name).joined(separator: ", ")): a FOR TABLES IN SCHEMA or FOR ALL TABLES publication publishes their rows, and a subscriber without them stops; run it without --online"))
        }
        let locked = step.statements.contains { $0.lock == .accessExclusive }
        if locked, !topology.standbys.isEmpty {
            hazards.append(Hazard(code: standbyLocks, message: "the step's ACCESS EXCLUSIVE locks replay on standby \(topology.standbys.map(\.name).joined(separator: ", ")) and cancel queries there that read the tables (max_standby_streaming_delay)"))
        }
        return hazards
    }

    /// The tables a lightweight step renames in place (`ALTER TABLE … RENAME TO`, which keeps
    /// the table and its memberships), each with its new name.
    static func renamedInPlace(_ step: PlannedStep, source: StoreLayout, destination: StoreLayout) -> [String: [String]] {
        guard step.kind == .lightweight else { return [:] }
        let store = quoteIdentifier(destination.schema)
        let texts = Set(step.statements.map(\.sql.text))
        let (old, new) = (Set(source.tables.map(\.name)), Set(destination.tables.map(\.name)))
        var renamed: [String: [String]] = [:]
        for from in old.subtracting(new) {
            for to in new.subtracting(old) where texts.contains("ALTER TABLE \(store).\(quoteIdentifier(from)) RENAME TO \(quoteIdentifier(to))") {
                renamed[from, default: []].append(to)
            }
        }
        return renamed
    }

    /// Tables whose rows a lightweight step's own statements insert, update or delete, from
    /// the changes that planned them (`SubscriberPart.writes`), in the step's order.
    public static func writtenTables(_ step: PlannedStep) -> [String] {
        var tables: [String] = []
        for case .writes(let table) in step.subscriberParts where !tables.contains(table) {
            tables.append(table)
        }
        return tables
    }

    /// The store's tables that statements starting with one of `prefixes` name first.
    public static func tables(in statements: [PlannedStatement], prefixes: [String], store: String) -> [String] {
        let prefix = quoteIdentifier(store) + "."
        var tables: [String] = []
        for statement in statements {
            let text = statement.sql.text
            guard prefixes.contains(where: text.hasPrefix), let start = text.range(of: prefix) else { continue }
            let rest = text[start.upperBound...]
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else { continue }
            let table = String(rest[rest.index(after: rest.startIndex)..<end])
            if !tables.contains(table) { tables.append(table) }
        }
        return tables
    }
}
