/// What a plan's decisions need to know beside the store itself, read by the engine into the
/// snapshot (`StoreSnapshot.surroundings`) so that Planning decides and the engine never edits
/// a plan: the schemas a heavyweight step makes beside the store, what the application built on
/// the store's tables, and the passes an interrupted `apply` committed.
///
/// The engine reads the heavyweight facts only when the plan may hold a heavyweight step (an
/// explicit mapping model given, the store not at the target), and the name facts only for a
/// missing store; unread facts decide nothing.
public struct StoreSurroundings: Sendable, Hashable {
    /// `<store>~staging`, `<store>~` and `<store>~retired`, by name, when read.
    public var neighbours: [String: NeighbourSchema] = [:]
    /// The metadata records the schemas made beside stores (`store_schemas`, layout 2 on):
    /// only then is a schema in one of their places checked.
    public var recordsSchemas = false
    /// A missing store: the stores that sit where its backup or staging schemas would.
    public var storesInDerivedPlaces: [String] = []
    /// A missing store: the store and role its name is recorded for as a schema made beside one.
    public var nameRecordedAs: NeighbourSchema.Record?
    /// What the application built on the store's tables (`StoreDependents`).
    public var dependents: [StoreDependent] = []
    /// The passes an interrupted heavyweight `apply` committed in the staging schema, with the
    /// step digest each was recorded under; empty without a staging schema.
    public var passesCommitted: [CommittedPass] = []
    /// What an interrupted heavyweight `apply` left in the checkpoint table for this store
    /// (row 0 and each pass's checkpoint), read with `passesCommitted` once the metadata has
    /// the table; `ResumeDecision.decide` takes it.
    public var earlierRun: EarlierRun?
    /// The step an interrupted `apply --online` left half done (its online checkpoint): plain
    /// `apply` finishes it online rather than run offline statements over it.
    public var onlineRunLeft: OnlineRunLeft?
    /// The store serves its previous version through views until `complete` (`apply --expand`).
    public var expansionInFlight: ExpansionInFlight?

    public init() {}
}

/// A schema in one of the places a heavyweight step uses beside a store.
public struct NeighbourSchema: Sendable, Hashable {
    /// How `orchestrator.store_schemas` records a schema.
    public struct Record: Sendable, Hashable {
        public var store: String
        public var role: StoreSchemaRole?

        public init(store: String, role: StoreSchemaRole?) {
            self.store = store
            self.role = role
        }
    }

    public var present: Bool
    /// The schema is a store of its own.
    public var isStore: Bool
    public var record: Record?

    public init(present: Bool, isStore: Bool, record: Record?) {
        self.present = present
        self.isStore = isStore
        self.record = record
    }
}

/// The roles of the schemas orchestrator makes beside a store (`orchestrator.store_schemas`).
public enum StoreSchemaRole: String, Sendable, Hashable {
    case staging, backup, retired

    public var description: String {
        switch self {
        case .staging: "staging schema"
        case .backup: "backup"
        case .retired: "retired old store"
        }
    }
}

/// An object the application built on one of the store's tables: "view public.names" on
/// table `animal`.
public struct StoreDependent: Sendable, Hashable {
    public var object: String
    public var table: String

    public init(object: String, table: String) {
        self.object = object
        self.table = table
    }
}

/// A heavyweight pass committed by an earlier `apply`, as its checkpoint records it.
public struct CommittedPass: Sendable, Hashable {
    public var pass: Int
    public var stepDigest: String

    public init(pass: Int, stepDigest: String) {
        self.pass = pass
        self.stepDigest = stepDigest
    }
}

/// The step of an unfinished `apply --online` run, as its checkpoint names it.
public struct OnlineRunLeft: Sendable, Hashable {
    public var from: String
    public var to: String

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}
