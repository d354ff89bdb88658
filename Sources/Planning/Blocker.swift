/// Why a plan cannot run, with a stable code scripts can match on (docs/cli-output.md, "Blocker
/// codes"), as hazards and inference refusals have.
public struct Blocker: Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The store's version is in the model's files, but its file cannot be read or is invalid.
        case storeVersionUnusable
        /// The store's version is known only from the database's record of applied versions.
        case storeVersionRecordedOnly
        /// The way from the store's version to the target goes through a version that cannot be used.
        case versionOnTheWayUnusable
        /// The target comes before the store's version: migrations only go forward.
        case targetBeforeStore
        /// An `.xcdatamodeld` declares no order of versions, the store's version sorts after the
        /// target by name, and no direct step can be inferred or is given by a mapping model.
        case noDirectStep
        /// No mapping can be inferred between two versions (each inference refusal, by entity and property).
        case notInferable
        /// A mapping is inferred but cannot run in place: it needs a mapping model.
        case notInPlace
        /// Two mapping models on the way cover the same versions.
        case overlappingMappingModels
        /// A mapping model on the way was not loaded for planning.
        case mappingModelNotLoaded
        /// A mapping model on the way cannot run: an unregistered custom policy, an entity or
        /// property it names that does not exist, an expression that cannot be used.
        case mappingModelRefused
        /// The store's name collides with the schemas orchestrator makes beside stores.
        case storeNameConflict
        /// A schema in the place of a heavyweight step's staging or backup schema is not
        /// orchestrator's own.
        case foreignSchema
        /// An object the application built on the store's tables (a view, a trigger, a policy,
        /// a foreign key from another schema, …) that a heavyweight step's new tables cannot
        /// take over.
        case dependentObjects
        /// A subscription writing into the store has not finished its first copy of a table.
        case subscriptionSyncing
        /// `--expand`: the old version's views cannot serve a change (each code as
        /// `ExpandRefusal.Code`, docs/two-versions.md, "Refusals").
        case expandEntityRemoved, expandRemovedEntitySharesTable, expandRemovedTableTaken, expandRemovedLinkDenies, expandRowsMoved, expandLossyTypeChange, expandRemovedRequired, expandRequiredLink, expandColumnsRegrouped, expandLinksMoved, expandUniqueAdded
        /// `--expand` of a heavyweight step (a mapping model): only lightweight steps are served
        /// through views.
        case expandHeavyweight
        /// `--expand` of a plan of several steps: one version is served beside the next.
        case expandSeveralSteps
        /// The store serves two versions (`apply --expand`) until `complete`: no other migration
        /// runs meanwhile.
        case expandInFlight
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
