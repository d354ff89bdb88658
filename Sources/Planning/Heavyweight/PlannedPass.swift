import Mapping
import ObjectModel
import SQLBuilding

/// A part of a heavyweight step that commits on its own and records a checkpoint, so that
/// `apply` after a crash continues with the next pass.
public struct PlannedPass: Sendable, Hashable {
    public enum Stage: String, Sendable, Hashable {
        /// The bare tables of the new store, the association table.
        case prepare
        /// Stage 1, per entity mapping: destination instances with their attributes.
        case createInstances
        /// Stage 2, per entity mapping: relationships, through the association table.
        case createRelationships
        /// Stage 3: the destination's constraints validate every row; policies' own validation.
        case validate
    }

    public enum Execution: String, Sendable, Hashable {
        /// One `INSERT … SELECT` / `UPDATE … FROM` per statement, in PostgreSQL.
        case setBased
        /// Rows read in batches, computed in Swift (policies, policy functions) and copied back.
        case streaming
    }

    /// Stage 2 runs in two parts: every entity mapping's to-one columns, then the rest.
    public enum Part: String, Sendable, Hashable {
        case toOne = "to-one"
        case toMany = "to-many"
    }

    public var stage: Stage
    public var part: Part?
    public var entityMapping: String?
    public var execution: Execution
    /// Run in the pass's transaction, before the rows stream when the pass streams.
    public var statements: [PlannedStatement]
    /// What a streaming pass computes in Swift; nil for set-based passes.
    public var stream: StreamedMapping?
    /// The source table the pass reads (its rows are the pass's estimate); nil when it reads none.
    public var sourceTable: String?
    /// Rows the pass reads, as far as the catalog's statistics know (filled in by the engine).
    public var rowEstimate: Int
    /// The staging tables whose rows the pass can add or delete, recounted for its checkpoint;
    /// nil: any of them.
    public var tablesWritten: [String]?
    /// Stage 1: the entity mappings whose stage 1 pass must have committed before this one
    /// starts; the others may run at the same time (`apply --jobs`, `StageOneLoads.waits`).
    public var waitsFor: [String] = []
    /// Stage 1: how its INSERT may run in parts at once (`SplitInsert`); nil when it may not.
    /// Not part of the step's digest: the statements are the same, split or not.
    public var split: SplitInsert?

    public init(
        stage: Stage, part: Part? = nil, entityMapping: String? = nil, execution: Execution = .setBased, statements: [PlannedStatement],
        stream: StreamedMapping? = nil, sourceTable: String? = nil, rowEstimate: Int = 0
    ) {
        self.stage = stage
        self.part = part
        self.entityMapping = entityMapping
        self.execution = execution
        self.statements = statements
        self.stream = stream
        self.sourceTable = sourceTable
        self.rowEstimate = rowEstimate
    }

    /// "createInstances RecipeToRecipe", "createRelationships RecipeToRecipe (to-one)", "validate".
    public var name: String { stage.rawValue + (entityMapping.map { " " + $0 } ?? "") + (part.map { " (\($0.rawValue))" } ?? "") }
}

/// An entity mapping run through Swift: the source rows it reads, what it computes for each,
/// and where the results go.
public struct StreamedMapping: Sendable, Hashable {
    public var entityMapping: String
    /// The custom entity migration policy, by its registered name.
    public var policy: String?
    public var sourceEntity: String
    public var destinationEntity: String
    /// The staging schema and the destination entity's table in it.
    public var schema: String
    public var destinationTable: String
    /// Stage 1: `destination_pk`, `source_pk`, `source_entity`, then one column per source
    /// value (named by its key) for each source row the association table holds for this
    /// entity mapping (in destination key order; straight from the source table when the rows
    /// keep their keys). Dates come as epoch seconds, binary as hex.
    public var sourceRows: SQL
    /// The columns `sourceRows` starts with, read by name.
    public enum KeyColumn: String, Sendable, CaseIterable {
        case destinationKey = "destination_pk"
        case sourceKey = "source_pk"
        case sourceEntity = "source_entity"
    }
    public var sourceValues: [SourceValue]
    /// The destination attributes computed per row; those without an expression keep their
    /// column default.
    public var attributes: [StreamedAttribute]
    /// To-one columns set in stage 1 from the row's `key` value (the linked row's key).
    public var links: [StreamedLink]
    /// The association rows of source rows for which the policy created no destination row:
    /// deleted after stage 1, so stage 2 links nothing to a row that does not exist.
    public var pruneAssociations: SQL

    /// A value read from the source row: an attribute of the source object (`name`) or of an
    /// object reached through to-one relationships (`chef.name`).
    public struct SourceValue: Sendable, Hashable {
        public var key: String
        public var type: AttributeType
    }

    public struct StreamedLink: Sendable, Hashable {
        public var column: String
        public var key: String
    }

    public struct StreamedAttribute: Sendable, Hashable {
        public var name: String
        public var column: String
        public var type: AttributeType
        public var expression: CheckedExpression?
    }
}
