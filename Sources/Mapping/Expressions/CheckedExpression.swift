import ObjectModel

/// A value expression checked against both model versions for one destination attribute:
/// every key path resolved, every type known. The SQL compiler and the evaluator take it.
public struct CheckedExpression: Sendable, Hashable {
    public let expression: ValueExpression
    /// The attribute the value goes into.
    public let destination: Attribute
    /// The type of the value before it is stored (converted as PostgreSQL's assignment does).
    public var type: ValueType { node.type }
    /// True when the expression calls a policy function: the mapping then streams rows through
    /// Swift instead of running as one `INSERT … SELECT`.
    public var needsSwift: Bool { node.needsSwift }
    /// The source attributes read, each once, in order of appearance; the streaming path
    /// selects them and passes them to the evaluator under `AttributeReference.key`.
    public let attributes: [AttributeReference]
    /// The to-one relationships followed, as paths from the source object, shortest first.
    public let joins: [ToOneJoin]
    /// Related objects passed to policy functions (`$source.team`), each once; the streaming
    /// path selects their keys under `ObjectReference.key`.
    public var objects: [ObjectReference] { node.objectReferences.reduce(into: []) { if !$0.contains($1) { $0.append($1) } } }
    let node: TypedNode
}

/// A source object reached through to-one relationships and passed to a policy function on
/// its own: `$source.team` is `relationships: ["team"]`, entity `Team`.
public struct ObjectReference: Sendable, Hashable {
    public var relationships: [String]
    /// The entity the last relationship leads to.
    public var entity: String
    public var key: String { relationships.joined(separator: ".") }
}

/// A filter predicate checked against the source version.
public struct CheckedPredicate: Sendable, Hashable {
    public let predicate: FilterPredicate
    public let attributes: [AttributeReference]
    public let joins: [ToOneJoin]
    let node: TypedPredicate
}

/// A source attribute reached from the source object through zero or more to-one
/// relationships: `$source.chef.name` is `relationships: ["chef"]`, attribute `name`.
public struct AttributeReference: Sendable, Hashable {
    public var relationships: [String]
    public var attribute: Attribute
    /// The source row's column, or the column of the joined row: see `SQLExpressionCompiler`.
    /// Sibling entities' declarations may have columns of their own (`PropertyColumns`).
    public var columnName: String

    public init(relationships: [String], attribute: Attribute, columnName: String? = nil) {
        self.relationships = relationships
        self.attribute = attribute
        self.columnName = columnName ?? StoreNaming.columnName(attribute: attribute.name)
    }

    /// The key of this attribute in the source rows given to `ExpressionEvaluator`: the key path
    /// without `$source`, e.g. `chef.name`.
    public var key: String {
        // Read once per row and attribute on the streaming path: no joining for the usual case.
        relationships.isEmpty ? attribute.name : (relationships + [attribute.name]).joined(separator: ".")
    }
}

/// A to-one relationship followed by a key path. `path` leads from the source object to the
/// object joined, e.g. `["app", "source"]` for `$source.app.source.identifier`; the
/// relationship is the last step, declared on `entity` (in the source version).
public struct ToOneJoin: Sendable, Hashable {
    public var path: [String]
    public var entity: String
    public var relationship: Relationship
}

/// What a relationship mapping's expression asks for.
public enum RelationshipExpression: Sendable, Hashable {
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
    /// "Name", $source.path)`: the destination objects entity mapping `mappingName` made from
    /// the source objects at `sourceKeyPath` (to-one steps, then a to-one or to-many).
    case destinationInstances(mappingName: String, sourceKeyPath: [String])
    /// A policy function gives the objects: needs Swift.
    case function(target: Variable, selector: String, arguments: [ValueExpression])

    public var needsSwift: Bool {
        if case .function = self { return true }
        return false
    }
}

/// The typed tree the checker builds. Every node knows its type.
indirect enum TypedNode: Sendable, Hashable {
    case constant(Value, ValueType)
    case attribute(AttributeReference, ValueType)
    case negate(TypedNode, ValueType)
    case arithmetic(ArithmeticOperator, TypedNode, TypedNode, ValueType)
    case builtin(BuiltinFunction, [TypedNode], ValueType)
    case function(target: Variable, selector: String, arguments: [TypedArgument])

    var type: ValueType {
        switch self {
        case .constant(_, let type), .attribute(_, let type), .negate(_, let type), .arithmetic(_, _, _, let type),
             .builtin(_, _, let type):
            return type
        case .function:
            return .unknown
        }
    }

    var needsSwift: Bool {
        switch self {
        case .constant, .attribute: false
        case .negate(let operand, _): operand.needsSwift
        case .arithmetic(_, let left, let right, _): left.needsSwift || right.needsSwift
        case .builtin(_, let arguments, _): arguments.contains { $0.needsSwift }
        case .function: true
        }
    }

    /// Objects passed to policy functions, in order of appearance, with repeats.
    var objectReferences: [ObjectReference] {
        switch self {
        case .constant, .attribute: []
        case .negate(let operand, _): operand.objectReferences
        case .arithmetic(_, let left, let right, _): left.objectReferences + right.objectReferences
        case .builtin(_, let arguments, _): arguments.flatMap(\.objectReferences)
        case .function(_, _, let arguments): arguments.compactMap { argument in
            if case .object(let reference) = argument { return reference }
            return nil
        }
        }
    }

    /// Attribute references in order of appearance, with repeats.
    var attributeReferences: [AttributeReference] {
        switch self {
        case .constant: []
        case .attribute(let reference, _): [reference]
        case .negate(let operand, _): operand.attributeReferences
        case .arithmetic(_, let left, let right, _): left.attributeReferences + right.attributeReferences
        case .builtin(_, let arguments, _): arguments.flatMap(\.attributeReferences)
        case .function(_, _, let arguments): arguments.flatMap(\.attributeReferences)
        }
    }
}

/// An argument of a policy function: a value, or one of the variables on its own (the
/// function receives the object, the manager, …).
enum TypedArgument: Sendable, Hashable {
    case value(TypedNode)
    case variable(Variable)
    /// `$source.team`: the related object itself.
    case object(ObjectReference)

    var attributeReferences: [AttributeReference] {
        if case .value(let node) = self { return node.attributeReferences }
        return []
    }
}

indirect enum TypedPredicate: Sendable, Hashable {
    case constant(Bool)
    case comparison(TypedComparison)
    case and(TypedPredicate, TypedPredicate)
    case or(TypedPredicate, TypedPredicate)
    case not(TypedPredicate)

    var attributeReferences: [AttributeReference] {
        switch self {
        case .constant: []
        case .comparison(let comparison): ([comparison.left] + comparison.right).flatMap(\.attributeReferences)
        case .and(let left, let right), .or(let left, let right): left.attributeReferences + right.attributeReferences
        case .not(let operand): operand.attributeReferences
        }
    }
}

/// A comparison with typed sides; `right` holds one node, or the items of an `IN` list.
struct TypedComparison: Sendable, Hashable {
    var left: TypedNode
    var op: ComparisonOperator
    var right: [TypedNode]
    var isCaseInsensitive: Bool
}

/// Each reference once, in order of first appearance.
func uniqued(_ references: [AttributeReference]) -> [AttributeReference] {
    var seen: Set<AttributeReference> = []
    return references.filter { seen.insert($0).inserted }
}
