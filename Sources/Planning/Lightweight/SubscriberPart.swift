import SQLBuilding

/// Where a lightweight step's statement goes when `apply --subscriber` runs the step around the
/// publisher's (docs/replication.md, "A backfill beside subscribers"): decided from the change
/// that planned the statement, never from its SQL text, as `ExpandDeferral` decides deferred drops.
public enum SubscriberPart: Sendable, Hashable {
    /// A new column that rows of the old shape still fit (nullable, or NOT NULL with a default
    /// the subscriber fills itself): added on each subscriber before the publisher's step.
    case addedFirst(AddedColumn)
    /// A table the step creates, bare (its foreign keys and indexes come last): created on each
    /// subscriber before the publisher's step. When the publisher will publish it, the publisher
    /// creates it first too, in a transaction of its own, and each subscription learns it
    /// (`REFRESH PUBLICATION`) while it is still empty: its rows, written by the publisher's
    /// step, then replicate instead of being skipped (docs/replication.md).
    case createdFirst(table: String)
    /// Rows of `table` written. When the publisher publishes `table` the writes replicate, and
    /// a subscriber takes them from its subscription instead of writing them again.
    case writes(table: String)
    /// Run on each subscriber once the publisher's step was applied there: drops, NOT NULL,
    /// defaults, constraints, indexes, checks.
    case last
    /// A column of `table` dropped: run last, as `last`. When the publisher publishes `table`,
    /// rows it wrote in the old shape must all reach a subscriber before it drops the column
    /// (PostgreSQL's apply stops for good on a replicated column it lacks).
    case drops(table: String)
    /// No order of the two sides keeps this fitting beside replicated writes: a rename (rows
    /// are applied by table and column names; a constraint is renamed only with its table or
    /// column), a column's type changed (a value written in the new type stops the subscriber's
    /// apply worker), a table dropped (rows of it written at the publisher before the step would
    /// still reach a subscriber that dropped it).
    case unorderable
}

extension SchemaChange {
    /// One part for each of the change's statements (`statements(in:)`).
    func subscriberParts(in schema: String) -> [SubscriberPart] {
        let each: SubscriberPart
        switch kind {
        case .addColumn(let change):
            // `AddColumn` adds NOT NULL only with a default; without one, `SetNotNull` comes last.
            each = .addedFirst(AddedColumn(change, in: schema))
        case .backfillNulls(let change): each = .writes(table: change.table)
        case .clearValues(let change): each = .writes(table: change.table)
        case .copyColumnValues(let change): each = .writes(table: change.table)
        case .copyRows(let change): each = .writes(table: change.toTable)
        case .detachReferences(let change): each = .writes(table: change.table)
        case .fillJoinTable(let change): each = .writes(table: change.table)
        case .fillOrderColumn(let change): each = .writes(table: change.table)
        case .fillToOneColumn(let change): each = .writes(table: change.table)
        case .updateEntityNames(let change): each = .writes(table: change.table)
        case .deleteRows(let change):
            return change.clearings.map { .writes(table: $0.table) } + [.writes(table: change.table)]
        case .dropColumn(let change): each = .drops(table: change.table)
        case .addTable(let change): each = .createdFirst(table: change.table.name)
        case .addCheck, .addForeignKey, .addUnique, .changeColumnDefault, .createIndex, .dataCheck, .dropConstraint,
             .dropIndex, .dropNotNull, .dropUnique, .resetIdentity, .setNotNull, .shortestFloatText:
            each = .last
        case .renameColumn, .renameTable, .renameConstraint, .alterColumnType, .dropTables:
            each = .unorderable
        case .atSwitchOver, .foreignKeyBeside, .shadowTable, .rebuildBesideOthers, .jointSwap, .builtOnRebuilt:
            // `apply --online`'s forms: never in the offline form a subscriber's step runs.
            each = .unorderable
        }
        return Array(repeating: each, count: statements(in: schema).count)
    }
}

/// A lightweight step's statements by when a subscriber runs them, for the tables the
/// publisher publishes (`SubscriberSplit(step, published:)`).
public struct SubscriberSplit: Sendable, Hashable {
    /// Step 1 on each subscriber, before the publisher's step.
    public var addedFirst: [PlannedStatement] = []
    /// The columns `addedFirst` adds, one for each of its statements.
    public var addedColumns: [AddedColumn] = []
    /// Step 1 too: the tables the step creates, bare (`SubscriberPart.createdFirst`).
    public var createdFirst: [PlannedStatement] = []
    /// The tables `createdFirst` creates, one for each of its statements.
    public var createdTables: [String] = []
    /// The publisher publishes `createdTables`: it creates them first too, and each subscription
    /// learns them before the publisher's step writes a row of them; their rows replicate.
    public var publishesCreated = false
    /// The store's published tables whose columns the step drops (a `FOR TABLE` publication of
    /// one of them takes `createdTables` too: the rows that leave its columns stay published).
    public var droppedFrom: [String] = []
    /// Writes of published rows: run by the publisher only; they replicate.
    public var replicated: [PlannedStatement] = []
    /// The table each of `replicated` writes.
    public var replicatedTables: [String] = []
    /// After the publisher's step was applied on the subscriber, in the step's order, with the
    /// writes of rows the publisher does not publish.
    public var rest: [PlannedStatement] = []
    /// The first statement no order keeps fitting (`SubscriberPart.unorderable`); nil when none.
    public var unorderable: PlannedStatement?
    /// The step drops a column of a table the publisher publishes (`SubscriberPart.drops`).
    public var dropsPublished: Bool { !droppedFrom.isEmpty }
    /// The subscriber's step 4: the step with `rest` as its statements, run in place in one
    /// transaction (whatever the mode it was planned for: the publisher's rows replicated, no
    /// backfill is left to batch), with its metadata at the new version.
    public private(set) var remaining: PlannedStep?
    /// The publisher's step when it creates `createdTables` first (`publishesCreated`): the
    /// step without those statements, in place; nil otherwise (the publisher runs its step).
    public private(set) var publisherRemaining: PlannedStep?
}

extension SubscriberSplit {
    /// `step` split for `apply --subscriber`, `published` naming the store's tables the
    /// publisher publishes, `schemaPublished` true when a `FOR TABLES IN SCHEMA` publication
    /// publishes the store (and so every table the step creates); nil when the step neither
    /// writes a published row nor drops a published column (or is not lightweight).
    /// A created table is published when the store's schema is, or when the step drops columns
    /// of a table a `FOR TABLE` publication names (`apply --subscriber` adds it there): the
    /// links a to-one kept in a published column stay published in their join table.
    public init?(_ step: PlannedStep, published: Set<String>, schemaPublished: Bool = false) {
        precondition(step.subscriberParts.isEmpty || step.subscriberParts.count == step.statements.count, "step \(step.from ?? "") -> \(step.to): one subscriber part per statement")
        var split = SubscriberSplit()
        split.droppedFrom = step.subscriberParts.compactMap { part -> String? in
            guard case .drops(let table) = part, published.contains(table) else { return nil }
            return table
        }.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        let created = step.subscriberParts.compactMap { part -> String? in
            guard case .createdFirst(let table) = part else { return nil }
            return table
        }
        split.publishesCreated = !created.isEmpty && (schemaPublished || split.dropsPublished)
        let publishedAfter = split.publishesCreated ? published.union(created) : published
        var restParts: [SubscriberPart] = []
        for (statement, part) in zip(step.statements, step.subscriberParts) {
            switch part {
            case .addedFirst(let column):
                split.addedFirst.append(statement)
                split.addedColumns.append(column)
                continue
            case .createdFirst(let table):
                split.createdFirst.append(statement)
                split.createdTables.append(table)
                continue
            case .writes(let table) where publishedAfter.contains(table):
                split.replicated.append(statement)
                split.replicatedTables.append(table)
                continue
            case .writes, .last, .drops: break
            case .unorderable: split.unorderable = split.unorderable ?? statement
            }
            split.rest.append(statement)
            restParts.append(part)
        }
        guard !split.replicated.isEmpty || split.dropsPublished else { return nil }
        var remaining = step
        remaining.body = .inPlace
        remaining.statements = split.rest
        remaining.subscriberParts = restParts
        split.remaining = remaining
        if split.publishesCreated {
            split.publisherRemaining = Self.step(step, without: split.createdFirst)
        }
        self = split
    }
}

extension SubscriberSplit {
    /// The publisher's step once it created its published tables first: `created` left out of
    /// its statements and, planned for `apply --online`, out of its phases (a phase left empty
    /// stays, so that a run's checkpoint counts the same phases as the whole step's).
    static func step(_ whole: PlannedStep, without created: [PlannedStatement]) -> PlannedStep {
        var step = whole
        let kept = zip(whole.statements, whole.subscriberParts).filter { !created.contains($0.0) }
        step.statements = kept.map(\.0)
        step.subscriberParts = kept.map(\.1)
        if case .phased(var online) = whole.body {
            for index in online.phases.indices {
                online.phases[index].statements.removeAll(where: created.contains)
            }
            step.body = .phased(online)
        } else {
            step.body = .inPlace
        }
        return step
    }
}

extension MigrationPlan {
    /// The plan a subscriber runs once the publisher's step reached it (`SubscriberSplit`'s
    /// step 4): this plan of one step, with the step's `remaining` in its place.
    public func subscriberRemainder(_ split: SubscriberSplit) -> MigrationPlan {
        guard let remaining = split.remaining else { preconditionFailure("a split made by SubscriberSplit(_:published:)") }
        return withOnlyStep(remaining)
    }

    /// The plan the publisher runs once it created the step's published tables first
    /// (`SubscriberSplit.publisherRemaining`).
    public func publisherRemainder(_ split: SubscriberSplit) -> MigrationPlan {
        guard let remaining = split.publisherRemaining else { preconditionFailure("a split whose publisher creates its tables first") }
        return withOnlyStep(remaining)
    }

    private func withOnlyStep(_ step: PlannedStep) -> MigrationPlan {
        precondition(steps.count == 1, "a remainder is of a plan of one step (\(steps.count))")
        var plan = self
        plan.steps = [step]
        return plan
    }
}

/// A column a subscriber adds before the publisher's step, and how it is taken back when that
/// step fails: dropped while it holds nothing but what it was added with (NULL, or its default).
public struct AddedColumn: Sendable, Hashable {
    public var table: String
    public var column: String
    /// True when a row holds a value the column was not added with (someone wrote into it).
    public var isWritten: SQL
    public var drop: PlannedStatement

    init(_ added: AddColumn, in schema: String) {
        table = added.table
        column = added.column.name
        let value: SQL = "\(ident: added.column.name)"
        let foreign: SQL = added.column.defaultExpression.map { "\(value) IS DISTINCT FROM (\($0))" } ?? "\(value) IS NOT NULL"
        isWritten = "SELECT EXISTS (SELECT 1 FROM \(ident: schema, added.table) WHERE \(foreign)) AS written"
        drop = PlannedStatement(
            "ALTER TABLE \(ident: schema, added.table) DROP COLUMN \(ident: added.column.name)",
            lock: .accessExclusive, summary: "drop column \(added.table).\(added.column.name) again (added first for the publisher's step, which failed)"
        )
    }
}
