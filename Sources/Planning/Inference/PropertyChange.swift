import ObjectModel

/// What differs in a matched property beyond its name. Every case here is inferable; the
/// changes that are not become `InferenceRefusal`s instead.
public enum PropertyChange: Sendable, Hashable {
    // Attributes and relationships.
    case madeOptional
    /// Made non-optional. Attributes: NULLs are backfilled with `backfill`, the destination's
    /// default. Relationships: `backfill` is nil; a to-one needs a data check
    /// (`PropertyMapping.needsDataCheck`), a to-many's count is not enforced by the store.
    case madeRequired(backfill: String?)
    /// Now declared by an entity higher in the entity's ancestry (`from`: source name of the old
    /// declaring entity, `to`: destination name of the new one).
    case movedUp(from: String, to: String)
    /// Now declared lower in the ancestry, by the entity itself or a parent closer to it.
    case movedDown(from: String, to: String)

    // Attributes.
    /// A number type change every value survives (`NumberConversion.lossless`): Integer 16 ->
    /// 32 -> 64, Boolean -> any number, an integer -> Decimal, Float -> Double, …
    case widened(from: AttributeType, to: AttributeType)
    /// A number type change some values would not survive (`NumberConversion.checked`): the
    /// store's values are checked before anything changes (`PropertyMapping.needsDataCheck`).
    case converted(from: AttributeType, to: AttributeType)
    /// The column default, as written in the model files.
    case defaultChanged(from: String?, to: String?)

    // Relationships.
    case toOneToToMany
    case orderedChanged(isOrdered: Bool)
    case deleteRuleChanged(from: DeleteRule, to: DeleteRule)
    /// Count bounds of a to-many (0 as maximum: unbounded).
    case minCountChanged(from: Int, to: Int)
    case maxCountChanged(from: Int, to: Int)
    /// The inverse: `from` is its name in the source, `to` in the destination (nil: none).
    case inverseChanged(from: String?, to: String?)

    /// Existing values must be checked before the change runs.
    var needsDataCheck: Bool {
        if case .converted = self { return true }
        return false
    }
}

extension PropertyChange: CustomStringConvertible {
    /// One phrase: "made required (NULLs backfilled with 0)", "widened from Integer 16 to Integer 32".
    public var description: String {
        func text(_ value: String?) -> String { value.map { "'\($0)'" } ?? "none" }
        return switch self {
        case .madeOptional: "made optional"
        case .madeRequired(let backfill?): "made required (NULLs backfilled with '\(backfill)')"
        case .madeRequired(nil): "made required"
        case .movedUp(let from, let to): "moved up from \(from) to \(to)"
        case .movedDown(let from, let to): "moved down from \(from) to \(to)"
        case .widened(let from, let to): "widened from \(from.rawValue) to \(to.rawValue)"
        case .converted(let from, let to): "converted from \(from.rawValue) to \(to.rawValue) (\(NumberConversion.fitRule(from: from, to: to)))"
        case .defaultChanged(let from, let to): "default \(text(from)) -> \(text(to))"
        case .toOneToToMany: "to-one -> to-many"
        case .orderedChanged(let isOrdered): isOrdered ? "made ordered" : "made unordered"
        case .deleteRuleChanged(let from, let to): "delete rule \(from.rawValue) -> \(to.rawValue)"
        case .minCountChanged(let from, let to): "min count \(from) -> \(to)"
        case .maxCountChanged(let from, let to): "max count \(from) -> \(to)"
        case .inverseChanged(let from, let to): "inverse \(from ?? "none") -> \(to ?? "none")"
        }
    }
}
