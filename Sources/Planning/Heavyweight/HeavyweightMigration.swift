import Mapping
import ObjectModel
import SQLBuilding

/// A heavyweight step: the new store is built in `<store>~staging` (a name no one gives a schema
/// by hand, so the drop before building can only hit our own leftovers) beside the old one, in
/// passes that each commit with a checkpoint, then swapped in, the old one kept as `<store>~`
/// (Core Data's backup).
public enum HeavyweightMigration {
    public static func stagingSchema(for store: String) -> String { StoreNaming.shortened(store + "~staging") }
    public static func backupSchema(for store: String) -> String { StoreNaming.shortened(store + "~") }
    /// Where the old store goes when it is not kept, until it is dropped after the swap.
    public static func retiredSchema(for store: String) -> String { StoreNaming.shortened(store + "~retired") }
    /// Which destination row each entity mapping made from which source row (Core Data's
    /// association table), kept in the staging schema until the swap: a view of the rows of
    /// `associationRowsTable` and, for entity mappings keeping their source keys, of the source
    /// rows themselves.
    public static let associationTable = "_association"
    public static let associationRowsTable = "_association_rows"

    /// 1. The staging schema, and triggers logging writes to the old
    ///    store there until the swap (`ChangeTracking`): a resumed step sees what changed while
    ///    no run was guarding the store.
    /// 2. A second session locks the old store's tables against writes until the swap has
    ///    committed (rows written meanwhile would be lost).
    /// 3. Prepare: the destination tables bare (to-one columns nullable until stage 2 has set
    ///    them; without their primary key when set-based passes alone fill them,
    ///    `StageOneLoads`), the association table.
    /// 4. Stage 1, a pass per entity mapping: associate each source row passing the filter with
    ///    a new destination key, then insert the destination rows with their attributes, set-
    ///    based or streamed through Swift (a policy, a policy function, or `forceStreaming`);
    ///    the last set-based pass filling a bare table builds its primary key.
    /// 5. Stage 2, passes per entity mapping: every to-one column through the association table,
    ///    then join tables and columns kept by the other side, then policies' hooks.
    /// 6. Stage 3: the destination's NOT NULLs, checks, foreign keys, uniques and indexes,
    ///    which validate the new rows.
    /// 7. Swap: the old schema becomes `<store>~` (replacing an earlier backup), staging
    ///    becomes the store, the association and checkpoint tables and the change log go; the
    ///    triggers go with their function once the write guard is released.
    /// Source rows no entity mapping carries over are `dataLoss` hazards (`RowsLeftBehind`), and
    /// so are the team's own tables and columns in the old store (`extras`) holding rows when
    /// that store is not kept (`ExtraObject.hazards`).
    static func step(
        mapping: MappingModel, from source: ModelVersion, to destination: ModelVersion, schema: String,
        options: PlanningOptions = PlanningOptions(), keepsBackup: Bool = true, rowEstimates: RowEstimates = RowEstimates(),
        extras: [ExtraObject] = []
    ) throws(HeavyweightRefusal) -> PlannedStep {
        let resolved = try Self.resolved(mapping, from: source, to: destination, registeredPolicies: options.registeredPolicies)
        let completed = mapping.completed(source: source, destination: destination)
        let staging = stagingSchema(for: schema)
        let sourceLayout = StoreLayout(version: source, schema: schema)
        let layout = StoreLayout(version: destination, schema: staging)
        let schemas = HeavyweightSchemas(store: schema, staging: staging, source: source, destination: layout, destinationVersion: destination)
        let stageOne = StageOneStatements(schemas: schemas)
        let stageTwo = StageTwoStatements(schemas: schemas)
        let loads = StageOneLoads(resolved) { options.forceStreaming || $0.needsSwift }
        var passes = [PlannedPass(stage: .prepare, statements: StagingStatements(schemas: schemas).statements(resolved, bare: loads.bareTables))]
        for (index, entityMapping) in resolved.enumerated() {
            let streams = options.forceStreaming || entityMapping.needsSwift
            var statements = entityMapping.keepsSourceKeys ? [] : stageOne.associate(entityMapping)
            var stream: StreamedMapping?
            if streams {
                stream = stageOne.stream(entityMapping)
            } else {
                statements.append(stageOne.insertInstances(entityMapping))
                statements += loads.primaryKey(after: entityMapping, in: schemas)
            }
            var pass = PlannedPass(
                stage: .createInstances, entityMapping: entityMapping.name, execution: streams ? .streaming : .setBased,
                statements: statements, stream: stream, sourceTable: entityMapping.sourceTable
            )
            pass.waitsFor = StageOneLoads.waits(of: index, in: resolved)
            pass.split = SplitInsert.of(pass, mapping: entityMapping, loads: loads, in: schemas, among: resolved)
            passes.append(pass)
        }
        // Stage 2: every to-one column first (the links kept elsewhere fill in where those
        // left a column empty), then per entity mapping the rest and its policy's hook.
        var analyzed = false
        // The tables stage 2 writes (nil: any, a policy's hook may), whose statistics stage 3
        // reads again.
        var filledInStageTwo: Set<String>? = []
        for part in [PlannedPass.Part.toOne, .toMany] {
            for entityMapping in resolved {
                var statements = part == .toOne ? stageTwo.toOne(entityMapping) : stageTwo.toMany(entityMapping)
                let runsPolicy = part == .toMany && entityMapping.policy != nil
                if statements.isEmpty && !runsPolicy { continue }
                filledInStageTwo = runsPolicy ? nil : filledInStageTwo?.union(entityMapping.tablesFilledInStageTwo(part))
                if !analyzed && !statements.isEmpty {
                    statements.insert(PlannedStatement(
                        "ANALYZE \(ident: staging, associationRowsTable)", lock: .shareUpdateExclusive, summary: "statistics of the association table for stage 2"
                    ), at: 0)
                    analyzed = true
                }
                passes.append(PlannedPass(
                    stage: .createRelationships, part: part, entityMapping: entityMapping.name,
                    execution: runsPolicy ? .streaming : .setBased, statements: statements, sourceTable: entityMapping.sourceTable
                ))
            }
        }
        let stageThree = StageThreeStatements(schemas: schemas, analyzedTables: filledInStageTwo)
        passes.append(PlannedPass(stage: .validate, statements: stageThree.statements()))
        for index in passes.indices { passes[index].tablesWritten = ChangeTracking.tablesWritten(by: passes[index], mappings: resolved) }
        let swap = SwapStatements(store: schema, staging: staging).statements(keepsBackup: keepsBackup)
        let tracking = ChangeTracking(store: schema, staging: staging, sourceTables: sourceLayout.tables.map(\.name), stagingTables: layout.tables.map(\.name))

        let sourceTables = Set(resolved.map(\.sourceTable)).sorted().joined(separator: ", ")
        let kept = keepsBackup
            ? "the old store is kept as schema \(backupSchema(for: schema))"
            : (["the old store is dropped once the new one is in place"] + [ExtraObject.emptyNote(of: extras)].compactMap { $0 }).joined(separator: "; ")
        let refusal = CatchUpRound.refusal(resolved, schemas: schemas)
        let catchUpForm: StagedWork.CatchUpForm
        if let refusal {
            catchUpForm = .refused(refusal)
        } else {
            let rerunWhole = CatchUpPolicies.rerunWhole(resolved, policyHooks: options.policyHooks, perRound: options.perRoundPolicies)
            let rounds = CatchUpRound(schemas: schemas, forceStreaming: options.forceStreaming)
            var catchUp = OnlineCatchUp(
                store: schema, staging: staging, sourceTables: sourceLayout.tables, round: rounds.steps(resolved, rerunWhole: Set(rerunWhole)),
                keySequences: CatchUpPolicies(schemas: schemas, keys: CatchUpKeys(staging: staging)).keySequences(resolved),
                keptKeys: CatchUpPolicies.keptKeys(resolved), relinkedJoinTables: CatchUpLinks.joinTables(resolved)
            )
            let pointed = CatchUpPointedRows(schemas: schemas)
            let pointers = pointed.pointers(resolved)
            catchUp.install += pointed.triggers(pointers)
            catchUp.loggedPointers = pointers.map { "\($0.table).\($0.column)" }
            if !rerunWhole.isEmpty {
                catchUp.rerunWhole = rerunWhole
                catchUp.guardedRound = rounds.steps(resolved, rerunWhole: Set(rerunWhole), underGuard: true)
                let whole = WholeMappingRerun(schemas: schemas, keys: CatchUpKeys(staging: staging))
                let wholes = resolved.filter { rerunWhole.contains($0.name) }
                catchUp.wholeKeys = wholes.map(whole.keys) + resolved.flatMap { whole.linkingRows($0, to: wholes) } + [whole.analyzeKeys()]
            }
            catchUpForm = .planned(catchUp, OnlineStageThree(stageThree: stageThree))
        }
        let writeGuard = PlannedStatement(
            "LOCK TABLE \(SQL.joined(sourceLayout.tables.map { "\(ident: schema, $0.name)" }, separator: ", ")) IN SHARE MODE",
            lock: .share, summary: "keep writes out of \(schema) until the new store is in place (held by a second session)"
        )
        var work = StagedWork(
            passes: passes, writeGuard: writeGuard, swap: swap, stagingSchema: staging, changeTracking: tracking,
            backupSchema: keepsBackup ? backupSchema(for: schema) : nil, catchUpForm: catchUpForm
        )
        work.renamedTables = renamedTables(resolved, source: sourceLayout, destination: layout)
        var step = PlannedStep(
            body: .staged(work), from: source.name, to: destination.name,
            statements: tracking.install + passes.flatMap(\.statements) + swap,
            hazards: [
                .tableRewrite("every table is rebuilt in \(staging) from \(completed.file) and swapped in; \(kept)"),
                .fullScan("every row of \(sourceTables.isEmpty ? "no table" : sourceTables) is read"),
                .longLock("writes to \(schema) wait until the migration commits"),
            ]
        )
        step.hazards.insert(
            contentsOf: RowsLeftBehind.hazards(
                of: completed, resolved: resolved, source: source, estimates: rowEstimates, backup: keepsBackup ? backupSchema(for: schema) : nil
            ) + (keepsBackup ? [] : ExtraObject.hazards(of: extras, store: schema)),
            at: 0
        )
        return step
    }

    /// `StagedWork.renamedTables`: for each source table the destination does not have, the
    /// destination tables its entity mappings fill that the source does not have (a table of
    /// a name both have is carried by that name).
    static func renamedTables(_ mappings: [ResolvedEntityMapping], source: StoreLayout, destination: StoreLayout) -> [String: [String]] {
        let (old, new) = (Set(source.tables.map(\.name)), Set(destination.tables.map(\.name)))
        var renamed: [String: [String]] = [:]
        for mapping in mappings where !new.contains(mapping.sourceTable) && !old.contains(mapping.destinationTable) {
            renamed[mapping.sourceTable, default: []].append(mapping.destinationTable)
        }
        return renamed.mapValues { Array(Set($0)).sorted() }
    }

    /// Drops a to-many link kept by its inverse's column when the inverse's own entity mapping
    /// sets that column from the source relationship's inverse, through this mapping: the same
    /// links from the other side (Xcode's defaults map both sides of every relationship), so
    /// the statement could only ever find the column set already.
    static func withoutMirroredLinks(_ mappings: [ResolvedEntityMapping], source: ModelVersion) -> [ResolvedEntityMapping] {
        mappings.map { mapping in
            var mapping = mapping
            mapping.toManyLinks.removeAll { link in
                guard case .inverseColumn(_, let column) = link.storage, link.orderColumn == nil, link.sourcePath.count == 1,
                      let entity = source.entity(named: mapping.sourceEntity),
                      let relationship = source.allRelationships(of: entity).first(where: { $0.name == link.sourcePath[0] }),
                      let inverse = source.inverse(of: relationship),
                      let other = mappings.first(where: { $0.name == link.mappingName }) else { return false }
                return other.toOneLinks.contains { $0.column == column && $0.mappingName == mapping.name && $0.sourcePath == [inverse.name] }
            }
            return mapping
        }
    }

    /// Every entity mapping of `mapping` made ready for the set-based path, with the keys and
    /// links each keeps; each refusal named.
    static func resolved(
        _ mapping: MappingModel, from source: ModelVersion, to destination: ModelVersion, registeredPolicies: Set<String> = []
    ) throws(HeavyweightRefusal) -> [ResolvedEntityMapping] {
        let mapping = mapping.completed(source: source, destination: destination)
        var resolved: [ResolvedEntityMapping] = []
        let duplicates = mapping.duplicateEntityMappingReasons
        var reasons = duplicates
        // Each of thousands of copies would be resolved for nothing; without copies, every
        // entity mapping is resolved, so that each refusal is named (each unregistered policy).
        for definition in mapping.entityMappings where duplicates.isEmpty {
            do {
                if let entityMapping = try ResolvedEntityMapping.resolve(
                    definition, in: mapping, source: source, destination: destination, registeredPolicies: registeredPolicies
                ) {
                    resolved.append(entityMapping)
                }
            } catch {
                reasons += error.reasons
            }
        }
        if !reasons.isEmpty { throw HeavyweightRefusal(reasons: reasons.map { "'\(source.name)' -> '\(destination.name)': \($0)" }) }
        return linkingInStageOne(keepingSourceKeys(withoutMirroredLinks(resolved, source: source)), source: source)
    }

    /// To-one links whose association is there already when an entity mapping's stage 1 runs
    /// (a view, or made by an earlier pass or this one) are set in stage 1, not by a stage 2
    /// UPDATE; those through an entity mapping keeping its source keys, by the key itself.
    static func linkingInStageOne(_ mappings: [ResolvedEntityMapping], source: ModelVersion) -> [ResolvedEntityMapping] {
        let kept = mappings.filter(\.keepsSourceKeys).map(\.name)
        return mappings.enumerated().map { index, mapping in
            var mapping = mapping
            let ready = Set(mappings.prefix(index + 1).map(\.name) + kept)
            mapping.linkedInStageOne = Set(mapping.toOneLinks.filter { ready.contains($0.mappingName) }.map(\.column))
            mapping.linkedByKey = Set(mapping.toOneLinks.filter { linksByKey($0, from: mapping, among: mappings, source: source) }.map(\.column))
            return mapping
        }
    }

    /// Entity mappings that fill a destination table alone keep their source rows' keys: all
    /// without a policy (which may drop rows), reading one source table, each source entity
    /// read by one of them, so no key can come twice.
    static func keepingSourceKeys(_ mappings: [ResolvedEntityMapping]) -> [ResolvedEntityMapping] {
        let byTable = Dictionary(grouping: mappings, by: \.destinationTable)
        return mappings.map { mapping in
            var mapping = mapping
            let group = byTable[mapping.destinationTable] ?? []
            let read = group.flatMap(\.sourceEntities)
            mapping.keepsSourceKeys = group.allSatisfy { $0.policy == nil && $0.sourceTable == mapping.sourceTable }
                && Set(read).count == read.count
            return mapping
        }
    }

    /// A link through an entity mapping that keeps its source keys, has no filter and reads
    /// every entity the source relationship can point at: the linked row is the one with the
    /// source key the relationship holds.
    static func linksByKey(_ link: ResolvedEntityMapping.ToOneLink, from mapping: ResolvedEntityMapping, among mappings: [ResolvedEntityMapping], source: ModelVersion) -> Bool {
        guard let target = mappings.first(where: { $0.name == link.mappingName }), target.keepsSourceKeys, target.filter == nil,
              let entity = source.entity(named: mapping.sourceEntity),
              let (_, _, pointedAt) = SourceJoins(schema: "", source: source, sourceEntity: entity).step(link.sourcePath) else { return false }
        return Set(source.hierarchy(of: pointedAt).filter { !$0.isAbstract }.map(\.name)).isSubset(of: Set(target.sourceEntities))
    }
}
