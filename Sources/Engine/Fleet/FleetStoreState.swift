import Foundation
import Planning

/// One store of a fleet: the server it is on (by the fleet file's name) and its schema.
public struct FleetStore: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var server: String
    public var store: String

    public init(server: String, store: String) {
        self.server = server
        self.store = store
    }

    /// `server/store`, as waves name it.
    public var description: String { "\(server)/\(store)" }

    public static func < (lhs: FleetStore, rhs: FleetStore) -> Bool {
        (lhs.server, lhs.store) < (rhs.server, rhs.store)
    }
}

/// `fleet status`'s answer for one store; the raw values are a public contract.
public enum FleetStoreStatus: String, Sendable, Hashable, CaseIterable {
    case upToDate, migrationRequired, missing, drifted, unknownVersion, inProgress, unreachable

    /// `fleet status --check` exits 1 for these.
    public var isError: Bool {
        switch self {
        case .drifted, .unknownVersion, .unreachable: true
        case .upToDate, .migrationRequired, .missing, .inProgress: false
        }
    }
}

/// What one bulk read found about one store.
public struct FleetStoreState: Sendable, Hashable {
    public var store: FleetStore
    public var status: FleetStoreStatus
    /// The version that made the store; nil when missing, unknown or unreachable.
    public var version: String?
    /// The store's model hash, from its metadata.
    public var modelHash: String?
    /// Why: the connection's error, the drift, what is in progress.
    public var detail: String?
    /// `fleet apply`'s survey (`ServerSurvey.readsFingerprints`): the store compared without
    /// blocking drift, and its catalog's fingerprint.
    public var surveyedCatalog: SurveyedCatalog? {
        get { surveyed?.catalog }
        set { surveyed = newValue.map(SurveyedBox.init) }
    }

    /// Held by reference: a fleet's states are copied whole (waves, the journal's records),
    /// and a state's size is paid once per store in each copy.
    private var surveyed: SurveyedBox?
    /// The previous version the store still serves through views (`apply --expand`, until
    /// `complete`); nil when it serves one version.
    public var expansion: ExpansionInFlight?
    /// An `apply --expand` of the store stopped before its switch-over, its old version served
    /// through early views: `fleet rollback` undoes it with the fleet's model.
    public var unfinishedExpand = false

    public init(store: FleetStore, status: FleetStoreStatus, version: String? = nil, modelHash: String? = nil, detail: String? = nil) {
        self.store = store
        self.status = status
        self.version = version
        self.modelHash = modelHash
        self.detail = detail
    }
}

/// A server of the fleet file that could not be read: its stores are `unreachable`.
public struct ServerUnreachable: Error, Sendable, CustomStringConvertible {
    public var server: String
    /// The connection error, without any password.
    public var reason: String

    public var description: String { "server \(server): \(reason)" }
}

/// A surveyed catalog behind a reference (`FleetStoreState.surveyedCatalog`), never changed.
private final class SurveyedBox: Sendable, Hashable {
    let catalog: SurveyedCatalog

    init(_ catalog: SurveyedCatalog) {
        self.catalog = catalog
    }

    static func == (lhs: SurveyedBox, rhs: SurveyedBox) -> Bool { lhs.catalog == rhs.catalog }

    func hash(into hasher: inout Hasher) { hasher.combine(catalog) }
}
