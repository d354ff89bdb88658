import Foundation

/// Values computed from one model version (its columns, validation, hashes, its store layout),
/// each once, and shared by every copy of the version: a plan through a long history lays out
/// each version for two steps and validates every version on the way, and `apply` plans twice.
/// Any change to the version starts empty values, so a value never outlives what it came from.
///
/// A value is computed outside the lock (computing one may need another) and the first stored
/// wins, so concurrent users see one value. Equal whatever they hold: never part of a
/// version's identity.
final class DerivedValues: @unchecked Sendable, Hashable {
    private let lock = NSLock()
    private var values: [ObjectIdentifier: any Sendable] = [:]

    func value<Value: Sendable>(_ type: Value.Type, compute: () -> Value) -> Value {
        let key = ObjectIdentifier(type)
        lock.lock()
        let found = values[key] as? Value
        lock.unlock()
        if let found { return found }
        let computed = compute()
        lock.lock()
        defer { lock.unlock() }
        if let stored = values[key] as? Value { return stored }
        values[key] = computed
        return computed
    }

    static func == (lhs: DerivedValues, rhs: DerivedValues) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

extension ModelVersion {
    /// The value of type `Value` derived from this version, computed by `compute` the first
    /// time it is asked for. One value per type: a module caches its own types (Planning, the
    /// version's store layout).
    public func cached<Value: Sendable>(_ type: Value.Type, _ compute: (ModelVersion) -> Value) -> Value {
        derived.value(type) { compute(self) }
    }

    /// The version's `PropertyColumns`, computed once.
    public var propertyColumns: PropertyColumns {
        cached(PropertyColumns.self) { PropertyColumns(version: $0) }
    }
}

/// Positions in a version's entities: by name (the first, when a name is defined twice) and by
/// parent name.
struct EntityIndex: Sendable, Hashable {
    var positions: [String: Int] = [:]
    var children: [String: [Int]] = [:]

    init(_ entities: [Entity]) {
        for (position, entity) in entities.enumerated() {
            if positions[entity.name] == nil { positions[entity.name] = position }
            if let parent = entity.parent { children[parent, default: []].append(position) }
        }
    }
}
