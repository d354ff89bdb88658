import ObjectModel

/// Lightweight rules for attributes. `entity` in refusals is the destination entity that
/// declares the attribute, so an attribute inherited by several entities is refused once.
enum AttributeRules {
    /// An attribute added to an entity that has rows: they need a value for it.
    static func addedRefusal(_ attribute: Attribute, entity: String) -> InferenceRefusal? {
        guard !attribute.isOptional, !hasUsableDefault(attribute) else { return nil }
        return .addedNonOptionalWithoutDefault(entity: entity, attribute: attribute.name)
    }

    /// What differs between matched attributes, in this order: type, optionality, default.
    static func compare(_ source: Attribute, _ destination: Attribute, entity: String) -> (changes: [PropertyChange], refusals: [InferenceRefusal]) {
        var changes: [PropertyChange] = []
        var refusals: [InferenceRefusal] = []
        if source.type != destination.type {
            switch NumberConversion.between(source.type, destination.type) {
            case .lossless: changes.append(.widened(from: source.type, to: destination.type))
            case .checked: changes.append(.converted(from: source.type, to: destination.type))
            case nil: refusals.append(.lossyTypeChange(entity: entity, attribute: destination.name, from: source.type, to: destination.type))
            }
        }
        if source.isOptional && !destination.isOptional {
            if hasUsableDefault(destination) {
                changes.append(.madeRequired(backfill: destination.defaultValue))
            } else {
                refusals.append(.madeNonOptionalWithoutDefault(entity: entity, attribute: destination.name))
            }
        } else if !source.isOptional && destination.isOptional {
            changes.append(.madeOptional)
        }
        if !sameDefault(source, destination) {
            changes.append(.defaultChanged(from: source.defaultValue, to: destination.defaultValue))
        }
        return (changes, refusals)
    }

    static func hasUsableDefault(_ attribute: Attribute) -> Bool {
        attribute.defaultValue.flatMap { DefaultValue.parse($0, as: attribute.type) } != nil
    }

    /// Same text, or the same value once read as the destination's type ("0" and "0.0" on Double).
    static func sameDefault(_ source: Attribute, _ destination: Attribute) -> Bool {
        if source.defaultValue == destination.defaultValue { return true }
        guard let old = source.defaultValue, let new = destination.defaultValue else { return false }
        let oldValue = DefaultValue.parse(old, as: destination.type)
        return oldValue != nil && oldValue == DefaultValue.parse(new, as: destination.type)
    }
}
