import Foundation
import Mapping
import Planning
import PostgresClient
import SQLBuilding

/// The hooks of a policy, by name (`OnlineEntityMigrationPolicy.declaredHooks`).
public typealias PolicyHook = Planning.PolicyHook

/// A custom entity migration policy (Core Data's `NSEntityMigrationPolicy`): code that runs for
/// one entity mapping at seven points of a heavyweight migration. Register it under the name
/// mapping models give (`policy: Name`, or the class name in an `.xcmappingmodel`) with
/// `PolicyRegistry.shared.register`. A fresh instance serves each pass, so keep state across
/// passes in the store, not in the instance.
///
/// Every hook has a default: `createDestinationInstances` makes the destination instance the
/// entity mapping's expressions describe, the others do nothing. What `apply --online` needs to
/// know of a policy is declared apart, by conforming to `OnlineEntityMigrationPolicy`.
public protocol EntityMigrationPolicy: AnyObject {
    /// Stage 1, before the first source instance.
    func begin(_ mapping: EntityMappingContext) throws
    /// Stage 1, once per source instance passing the filter: create its destination
    /// instances (`mapping.createDestinationInstance(for:)` for the associated one,
    /// `mapping.insertInstance(of:)` for others). Creating none drops the source instance.
    func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws
    /// Stage 1, after the last source instance.
    func endInstanceCreation(_ mapping: EntityMappingContext) throws
    /// Stage 2, once per destination instance this entity mapping created, after the links the
    /// mapping's expressions describe are set: change its attributes and to-one relationships.
    func createRelationships(for destination: DestinationInstance, _ mapping: EntityMappingContext) throws
    /// Stage 2, after the last destination instance.
    func endRelationshipCreation(_ mapping: EntityMappingContext) throws
    /// Stage 3, after the destination model's constraints have validated every row: throw to
    /// reject the migration.
    func performCustomValidation(_ mapping: EntityMappingContext) throws
    /// Stage 3, last.
    func end(_ mapping: EntityMappingContext) throws
    /// `FUNCTION($entityPolicy, "selector:", arguments…)` in one of the mapping's expressions,
    /// for the source instance being migrated.
    func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value
}

extension EntityMigrationPolicy {
    public func begin(_ mapping: EntityMappingContext) throws {}
    public func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
        _ = try mapping.createDestinationInstance(for: source)
    }
    public func endInstanceCreation(_ mapping: EntityMappingContext) throws {}
    public func createRelationships(for destination: DestinationInstance, _ mapping: EntityMappingContext) throws {}
    public func endRelationshipCreation(_ mapping: EntityMappingContext) throws {}
    public func performCustomValidation(_ mapping: EntityMappingContext) throws {}
    public func end(_ mapping: EntityMappingContext) throws {}
    public func function(_ selector: String, arguments: [FunctionCall.Argument], source: SourceInstance) throws -> Value {
        throw PolicyError(message: "\(type(of: self)) has no policy function \(selector)")
    }
}

/// An error a policy throws, or the engine throws about a policy: the migration stops, the
/// store stays as it was.
public struct PolicyError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Policies by the names mapping models give them. The `orchestrator` executable registers
/// none; a program built on the library registers its own before running the command.
public final class PolicyRegistry: @unchecked Sendable {
    public static let shared = PolicyRegistry()

    private let lock = NSLock()
    private var factories: [String: @Sendable () -> any EntityMigrationPolicy] = [:]

    public init() {}

    /// Registers `make` under `name`; a later registration of the same name replaces it.
    public func register(_ name: String, _ make: @escaping @Sendable () -> any EntityMigrationPolicy) {
        lock.withLock { factories[name] = make }
    }

    public var names: Set<String> { lock.withLock { Set(factories.keys) } }

    func make(_ name: String) -> (any EntityMigrationPolicy)? {
        lock.withLock { factories[name] }?()
    }
}

/// A source object being migrated: its entity, key and the values of its stored attributes
/// (and of the key paths the mapping's expressions read, as `chef.name`).
public final class SourceInstance {
    public let entity: String
    public let primaryKey: Int64
    public let values: [String: Value]
    /// The destination key stage 1 associated it with.
    let destinationKey: Int64

    init(entity: String, primaryKey: Int64, values: [String: Value], destinationKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.values = values
        self.destinationKey = destinationKey
    }

    /// The value of an attribute or key path; `.null` when it is NULL or not read.
    public subscript(key: String) -> Value { values[key] ?? .null }
}

/// A destination object: a row of the new store. Set attributes by name and to-one
/// relationships with `setRelationship`; the engine writes it back.
public final class DestinationInstance {
    public let entity: String
    public let primaryKey: Int64
    private(set) var values: [String: Value]
    /// To-one relationships by name: the key of the destination object, nil for none.
    private(set) var links: [String: Int64?]
    private(set) var changed: Set<String> = []

    init(entity: String, primaryKey: Int64, values: [String: Value] = [:], links: [String: Int64?] = [:]) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.values = values
        self.links = links
    }

    public subscript(attribute: String) -> Value {
        get { values[attribute] ?? .null }
        set {
            values[attribute] = newValue
            changed.insert(attribute)
        }
    }

    /// The key of the object a to-one relationship points at.
    public func relationship(_ name: String) -> Int64? { links[name] ?? nil }

    public func setRelationship(_ name: String, to destination: DestinationInstance?) {
        setRelationship(name, toKey: destination?.primaryKey)
    }

    public func setRelationship(_ name: String, toKey key: Int64?) {
        links[name] = .some(key)
        changed.insert(name)
    }

    func markWritten() { changed = [] }
}
