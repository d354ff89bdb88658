import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Real apps' version histories applied to stores holding generated rows: each maximal run of
/// consecutive pairs that inference accepts is applied in one go, and every row of an entity the
/// run keeps is still there with its kept values.
/// Proves Planning/Changes: every kind the corpus pairs plan.
@Suite(integration) struct CorpusRunTests {
    typealias S = MigratedStore
    static let rowsPerEntity = 20

    @Test(arguments: Corpus.bundles)
    func everyInferableRunKeepsTheRowsAndValuesOfKeptEntities(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        for run in InferableRun.runs(of: model) where run.changesTheModel {
            try TestDatabase.withFreshConnection { connection in
                if run.needsLinksGeneratedRowsLack {
                    try Self.checkStopsAtTheLinkCheck(run, of: model, in: "\(bundle), pair \(run)", on: connection)
                } else {
                    try Self.check(run, of: model, in: "\(bundle), run \(run)", on: connection)
                }
            }
        }
    }

    /// A pair that makes a to-one required, or adds a required one, on an entity with rows (the
    /// generated rows have no such link: a new column is empty), or that removes the entity a
    /// required to-one of kept rows points at: the step must stop before anything changes, at
    /// its pre-check naming the rows or at clearing the required links (Core Data's validation
    /// fails the same way). Where the generated rows allow it, it applies and is checked as a run.
    static func checkStopsAtTheLinkCheck(_ run: InferableRun, of model: VersionedModel, in context: String, on connection: PostgresConnection) throws {
        try SampleDataTests.createAndFill(model, version: run.first.name, store: S.store, rows: rowsPerEntity, on: connection)
        let migrator = StoreMigrator(connection: connection, model: model, store: S.store, targetVersion: run.last.name)
        let listed = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(S.store) ORDER BY 1")
        let tables = listed.rows.indices.compactMap { listed.value($0, "tablename") }
        func contents() throws -> [String] {
            try tables.map { table in
                try connection.execute("SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') AS v FROM \(ident: S.store, table) AS t").value(0, "v") ?? ""
            }
        }
        let before = try contents()
        do {
            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
        } catch {
            let text = String(describing: error)
            #expect(text.contains("check: ") || text.contains("(removed)\": ERROR 23"), "\(context): failed elsewhere than at its pre-check or a required link to removed rows: \(error)")
            #expect(try migrator.plan().storeVersion == run.first.name, "\(context): the store left its version")
            #expect(try contents() == before, "\(context): rows changed although the step stopped")
            return
        }
        try TestDatabase.withFreshConnection { try check(run, of: model, in: context, on: $0) }
    }

    /// The allowances of the check (renames followed through a chain, NULLs backfilled, a Float
    /// widened to Double, values cleared where a property moved down) on a run where the corpus
    /// has none of them; number type changes: TypeChangeMigrationTests.
    @Test func aRunWithRenamesBackfillsAndWideningsPassesTheCheck() throws {
        let model = try S.model([
            ("v1", S.version("""
                Animal: {attributes: {name: string, bark: string, weight: float, legs: int16}}
                Dog: {parent: Animal}
                Recipe: {attributes: {title: string, rating: int16}}
                """)),
            ("v2", S.version("""
                Animal: {attributes: {name: string, weight: double, legs: {type: int32, optional: false, default: 4}}}
                Dog: {parent: Animal, attributes: {bark: string}}
                Dish: {renamingIdentifier: Recipe, attributes: {heading: {type: string, renamingIdentifier: title}, rating: {type: int16, optional: false, default: 3}}}
                """)),
            ("v3", S.version("""
                Animal: {attributes: {name: string, weight: double, legs: {type: int32, optional: false, default: 4}}}
                Dog: {parent: Animal, attributes: {bark: string}}
                Dish: {attributes: {caption: {type: string, renamingIdentifier: heading}, rating: {type: int16, optional: false, default: 3}}}
                """)),
        ])
        let runs = InferableRun.runs(of: model)
        #expect(runs.map(\.description) == ["v1 -> v3 (2 pairs)"])
        try TestDatabase.withFreshConnection { connection in
            try Self.check(runs[0], of: model, in: "inline run", on: connection)
            #expect(try S.history(on: connection).count == 3, "a chain: the direct mapping loses the title")
            // The generated floats are exact in binary; 0.1 is not, and widening changes its text.
            let widened = try connection.execute("SELECT 0.1::real::double precision::text AS v").value(0, "v")
            let float = KeptAttribute(sourceName: "weight", name: "weight", convertedFrom: .float)
            #expect(widened != "0.1" && float.sameValue("0.1", widened) && !float.sameValue("0.2", widened))
        }
    }

    /// 1. Create the store at the run's first version and fill it.
    /// 2. Follow the pair mappings to the entities and attributes the run keeps; give the
    ///    attributes whose type change is checked values that fit (0 and 1 fit every number
    ///    type; the checks themselves: TypeChangeMigrationTests); snapshot them.
    /// 3. Apply once to the run's last version (a direct step or a chain, as planned).
    /// 4. The store is up to date; every kept row is there under its final name, its kept
    ///    values unchanged (NULLs may hold the backfill of an attribute made required).
    static func check(_ run: InferableRun, of model: VersionedModel, in context: String, on connection: PostgresConnection) throws {
        try SampleDataTests.createAndFill(model, version: run.first.name, store: S.store, rows: rowsPerEntity, on: connection)
        let migrator = StoreMigrator(connection: connection, model: model, store: S.store, targetVersion: run.last.name)
        let kept = KeptEntity.following(run.mappings, from: run.first, through: Array(run.versions.dropFirst()))
        let planned = try plannedLineage(migrator.plan(), model: model, context: context)
        var before: [String: [[String?]]] = [:]
        for entity in kept {
            for attribute in entity.attributes where attribute.isChecked {
                try connection.execute("UPDATE \(ident: S.store, entity.sourceTable) SET \(ident: attribute.sourceColumn) = _pk % 2 WHERE _entity = \(entity.sourceName) AND \(ident: attribute.sourceColumn) IS NOT NULL")
            }
            before[entity.sourceName] = try S.rows(entity.sourceTable, entity.attributes.map(\.sourceColumn), where: "_entity = " + quoteLiteral(entity.sourceName), on: connection)
        }

        _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))

        #expect(try migrator.plan().isUpToDate, "\(context): not up to date after apply")
        for entity in kept {
            let after = try S.rows(entity.table, entity.attributes.map(\.column), where: "_entity = " + quoteLiteral(entity.name), on: connection)
            let plannedEntity = planned.first { $0.sourceName == entity.sourceName }
            #expect(plannedEntity?.name == entity.name, "\(context): the planned steps map entity \(entity.sourceName) to \(plannedEntity?.name ?? "nothing"), the pairs to \(entity.name)")
            try expectKept(entity, planned: plannedEntity, before: before[entity.sourceName]!, after: after, in: context, on: connection)
        }
    }

    /// Lineage along the steps the plan runs, which decide the backfill values.
    static func plannedLineage(_ plan: MigrationPlan, model: VersionedModel, context: String) throws -> [KeptEntity] {
        let start = try #require(plan.storeVersion.flatMap(model.version(named:)), "\(context): store version unknown")
        var mappings: [InferredMapping] = []
        var versions: [ModelVersion] = []
        for step in plan.steps {
            let source = try #require(step.from.flatMap(model.version(named:)), "\(context): step without a source version")
            let target = try #require(model.version(named: step.to))
            mappings.append(try #require(MappingInference.infer(from: source, to: target).mapping, "\(context): planned step \(source.name) -> \(target.name) not inferable"))
            versions.append(target)
        }
        #expect(plan.isExecutable, "\(context): \(plan.blockers)")
        return KeptEntity.following(mappings, from: start, through: versions)
    }

    static func expectKept(_ entity: KeptEntity, planned: KeptEntity?, before: [[String?]], after: [[String?]], in context: String, on connection: PostgresConnection) throws {
        let subject = "\(context): entity \(entity.sourceName) (now \(entity.name) in table \(entity.table))"
        let afterByKey = Dictionary(uniqueKeysWithValues: after.map { ($0[0]!, $0) })
        let lost = before.map { $0[0]! }.filter { afterByKey[$0] == nil }
        #expect(lost.isEmpty, "\(subject): \(lost.count) of \(before.count) rows lost, _pk \(lost.prefix(10).joined(separator: ", "))")
        #expect(after.count == before.count, "\(subject): \(before.count) rows before, \(after.count) after")
        for (index, attribute) in entity.attributes.enumerated() {
            let plannedAttribute = planned?.attributes.first { $0.sourceName == attribute.sourceName }
            #expect(plannedAttribute?.name == attribute.name, "\(subject): the planned steps map attribute \(attribute.sourceName) to \(plannedAttribute?.name ?? "nothing"), the pairs to \(attribute.name)")
            let rule = plannedAttribute ?? attribute
            let backfill = try rule.backfill.flatMap { try backfillText($0, on: connection) }
            var mismatches: [String] = []
            for row in before {
                guard let kept = afterByKey[row[0]!] else { continue }
                let actual = kept[index + 1]
                let expected = row[index + 1] ?? backfill
                if !rule.sameValue(expected, actual) {
                    mismatches.append("_pk \(row[0]!): expected \(expected ?? "NULL"), actual \(actual ?? "NULL")")
                }
            }
            #expect(mismatches.isEmpty, "\(subject), attribute \(attribute.sourceName) (now \(attribute.name)): \(mismatches.count) of \(before.count) values changed; \(mismatches.prefix(3).joined(separator: "; "))")
        }
    }

    /// The text of a backfilled value, as the column of that step stores it.
    static func backfillText(_ backfill: KeptAttribute.Backfill, on connection: PostgresConnection) throws -> String? {
        let value = try #require(DefaultValue.parse(backfill.value, as: backfill.type), "backfill '\(backfill.value)' is not a \(backfill.type.rawValue)")
        let expression = ColumnTypes.defaultExpression(value, type: backfill.type)
        // Read as a column of that type is read (a boolean is `f`, not its ::text `false`).
        return try connection.execute("SELECT (\(expression))::\(unsafeRaw: ColumnTypes.sqlType(for: backfill.type)) AS v").value(0, "v")
    }
}

/// Consecutive versions whose every pair is inferred, as long as possible on both ends.
struct InferableRun: CustomStringConvertible {
    var versions: [ModelVersion]
    /// One per consecutive pair.
    var mappings: [InferredMapping]
    /// A single pair whose step checks that rows hold a to-one link it makes required.
    var needsLinksGeneratedRowsLack = false

    var first: ModelVersion { versions.first! }
    var last: ModelVersion { versions.last! }
    var description: String { "\(first.name) -> \(last.name) (\(mappings.count) pairs)" }

    /// A run of pairs with equal hashes only leaves the store as it is.
    var changesTheModel: Bool {
        zip(versions, versions.dropFirst()).contains { VersionHash.hashes(of: $0).model != VersionHash.hashes(of: $1).model }
    }

    static func runs(of model: VersionedModel) -> [InferableRun] {
        var runs: [InferableRun] = []
        var current: InferableRun?
        for (source, target) in zip(model.versions, model.versions.dropFirst()) {
            guard let mapping = MappingInference.infer(from: source, to: target).mapping else {
                current.map { runs.append($0) }
                current = nil
                continue
            }
            if mapping.checksLinks || mapping.removesRequiredLinkTargets(in: source) {
                // Its own run: the generated rows lack the links it requires.
                current.map { runs.append($0) }
                current = nil
                runs.append(InferableRun(versions: [source, target], mappings: [mapping], needsLinksGeneratedRowsLack: true))
                continue
            }
            if current == nil { current = InferableRun(versions: [source], mappings: []) }
            current!.versions.append(target)
            current!.mappings.append(mapping)
        }
        current.map { runs.append($0) }
        return runs
    }
}

/// A concrete entity of the first version that no mapping of the run removes, with the stored
/// attributes (inherited ones included) that none removes.
extension InferredMapping {
    /// A to-one made required, or added required, to entities that may have rows.
    var checksLinks: Bool {
        entityMappings.contains { $0.relationshipMappings.contains(where: \.needsDataCheck) }
    }

    /// Removes entities whose rows kept rows must link to (a required to-one): the step clears
    /// those links before deleting the rows, which a required link refuses, so the step stops
    /// with nothing changed, as Core Data's validation would on such rows.
    func removesRequiredLinkTargets(in source: ModelVersion) -> Bool {
        let removed = Set(entityMappings.filter { $0.kind == .remove }.compactMap(\.sourceEntity))
        guard !removed.isEmpty else { return false }
        return source.entities.contains { entity in
            !removed.contains(entity.name) && source.allRelationships(of: entity).contains { relationship in
                guard !relationship.isToMany, !relationship.isOptional, !relationship.isTransient,
                      let destination = source.entity(named: relationship.destination) else { return false }
                return source.hierarchy(of: destination).contains { removed.contains($0.name) }
            }
        }
    }
}

struct KeptEntity {
    var sourceName: String
    var sourceTable: String
    var name: String
    var table: String
    var attributes: [KeptAttribute]

    /// 1. Every concrete entity of `start` with its stored attributes.
    /// 2. Each mapping renames what it keeps and drops what it removes (a property moved down is
    ///    removed from the entities that no longer have it); attribute changes that bear on
    ///    values (a backfill, a number type change) are remembered.
    /// 3. Names are final: the table is the one of the entity's root in the last version.
    static func following(_ mappings: [InferredMapping], from start: ModelVersion, through versions: [ModelVersion]) -> [KeptEntity] {
        var kept = start.entities.filter { !$0.isAbstract }.map { entity in
            let table = StoreNaming.tableName(entity: start.root(of: entity).name)
            let attributes = start.allAttributes(of: entity).filter { !$0.isTransient }.map {
                KeptAttribute(sourceName: $0.name, name: $0.name)
            }
            return KeptEntity(sourceName: entity.name, sourceTable: table, name: entity.name, table: table, attributes: attributes)
        }
        for (mapping, version) in zip(mappings, versions) {
            kept = kept.compactMap { entity in
                guard let entityMapping = mapping.mapping(forSourceEntity: entity.name), entityMapping.kind != .remove,
                      let name = entityMapping.destinationEntity, let destination = version.entity(named: name) else { return nil }
                var next = entity
                next.name = name
                next.table = StoreNaming.tableName(entity: version.root(of: destination).name)
                next.attributes = entity.attributes.compactMap { attribute in
                    guard let propertyMapping = entityMapping.attributeMappings.first(where: { $0.source == attribute.name }),
                          propertyMapping.kind != .remove, let newName = propertyMapping.destination,
                          let type = version.allAttributes(of: destination).first(where: { $0.name == newName })?.type else { return nil }
                    var attribute = attribute
                    attribute.name = newName
                    for change in propertyMapping.changes {
                        switch change {
                        case .madeRequired(let value?) where attribute.backfill == nil:
                            attribute.backfill = KeptAttribute.Backfill(value: value, type: type)
                        case .widened(let from, _) where attribute.convertedFrom == nil:
                            attribute.convertedFrom = from
                        case .converted(let from, _):
                            attribute.convertedFrom = attribute.convertedFrom ?? from
                            attribute.isChecked = true
                        default:
                            break
                        }
                    }
                    return attribute
                }
                return next
            }
        }
        return kept
    }
}

struct KeptAttribute {
    struct Backfill {
        var value: String
        /// The attribute's type in the version that made it required.
        var type: AttributeType
    }

    var sourceName: String
    var name: String
    /// The first backfill of NULLs along the run; later ones find none.
    var backfill: Backfill?
    /// The first type of a number type change along the run: the text changes (`t` becomes
    /// `1`, a Float's 0.1 a Double's 0.10000000149011612), the number does not.
    var convertedFrom: AttributeType?
    /// A type change along the run is checked: the values must fit.
    var isChecked = false

    var sourceColumn: String { StoreNaming.columnName(attribute: sourceName) }
    var column: String { StoreNaming.columnName(attribute: name) }

    func sameValue(_ expected: String?, _ actual: String?) -> Bool {
        guard let convertedFrom, let expected, let actual else { return expected == actual }
        func number(_ text: String) -> Double? {
            switch text {
            case "t": 1
            case "f": 0
            default: convertedFrom == .float ? Float(text).map(Double.init) : Double(text)
            }
        }
        return number(expected) != nil && number(expected) == number(actual)
    }
}
