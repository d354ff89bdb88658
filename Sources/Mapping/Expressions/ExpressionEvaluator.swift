import Foundation

/// Evaluates checked expressions and predicates in Swift, one source row at a time, for
/// mappings that stream rows (those with policy functions). Computes what
/// `SQLExpressionCompiler`'s SQL computes in PostgreSQL, with SQL's NULL propagation in
/// values and NSPredicate's two-valued logic in predicates.
public struct ExpressionEvaluator: Sendable {
    /// What `now()` gives. The engine passes the time of its transaction, which is what
    /// `now()` gives in SQL.
    public var now: Date
    /// Calls policy functions (`FUNCTION($entityPolicy, …)`); nil when none can be called.
    public var callFunction: (@Sendable (FunctionCall) throws -> Value)?

    public init(now: Date, callFunction: (@Sendable (FunctionCall) throws -> Value)? = nil) {
        self.now = now
        self.callFunction = callFunction
    }

    /// The value to store in the destination attribute. `source` holds the source row's
    /// values under `AttributeReference.key` for every one of `checked.attributes`.
    public func evaluate(_ checked: CheckedExpression, source: [String: Value]) throws -> Value {
        let row = Row(values: source, text: .expression(checked.expression))
        let result = try value(checked.node, row)
        return try row.converting { () throws(Conversion.Failure) in
            try Conversion.stored(result, as: checked.type, in: checked.destination.type)
        }
    }

    /// Whether the source row passes the filter.
    public func evaluate(_ checked: CheckedPredicate, source: [String: Value]) throws -> Bool {
        try holds(checked.node, Row(values: source, text: .predicate(checked.predicate)))
    }

    func value(_ node: TypedNode, _ row: Row) throws -> Value {
        switch node {
        case .constant(let constant, _):
            return constant
        case .attribute(let reference, let type):
            guard let value = row.values[reference.key] else {
                preconditionFailure("the source row has no value for \(reference.key)")
            }
            return try row.converting { () throws(Conversion.Failure) in
                try Conversion.stored(value, as: type, in: reference.attribute.type)
            }
        case .negate(let operand, let type):
            let value = try self.value(operand, row)
            return try row.converting { () throws(Conversion.Failure) in try Arithmetic.negate(value, in: type) }
        case .arithmetic(let op, let left, let right, let type):
            let (l, r) = (try value(left, row), try value(right, row))
            return try row.converting { () throws(Conversion.Failure) in try Arithmetic.apply(op, l, r, in: type) }
        case .builtin(let function, let arguments, _):
            var values: [Value] = []
            for argument in arguments {
                values.append(try value(argument, row))
            }
            return try row.converting { () throws(Conversion.Failure) in try builtin(function, values) }
        case .function(let target, let selector, let arguments):
            guard let callFunction else {
                throw EvaluationError(expression: row.expression, message: "no policy function can be called for \(selector)")
            }
            var values: [FunctionCall.Argument] = []
            for argument in arguments {
                switch argument {
                case .variable(let variable): values.append(.variable(variable))
                case .object(let reference):
                    guard let key = row.values[reference.key] else { preconditionFailure("the source row has no key for \(reference.key)") }
                    if case .int(let primaryKey) = key {
                        values.append(.object(entity: reference.entity, primaryKey: primaryKey))
                    } else {
                        values.append(.object(entity: reference.entity, primaryKey: nil))
                    }
                case .value(let node): values.append(.value(try value(node, row)))
                }
            }
            return try callFunction(FunctionCall(target: target, selector: selector, arguments: values))
        }
    }

    private func builtin(_ function: BuiltinFunction, _ values: [Value]) throws(Conversion.Failure) -> Value {
        if function == .now { return .date(now) }
        if values[0] == .null { return .null }
        switch (function, values[0]) {
        case (.uppercase, .string(let s)): return .string(s.uppercased())
        case (.lowercase, .string(let s)): return .string(s.lowercased())
        case (.trim, .string(let s)): return .string(trimmed(s))
        case (.length, .string(let s)): return .int(Int64(s.unicodeScalars.count))
        case (.abs, .int(let i)):
            guard i != .min else { throw Conversion.Failure(message: "bigint out of range") }
            return .int(Swift.abs(i))
        case (.abs, .double(let d)): return .double(Swift.abs(d))
        case (.abs, .decimal(let text)): return .decimal(text.hasPrefix("-") ? String(text.dropFirst()) : text)
        default: throw Conversion.Failure(message: "\(function.rawValue) cannot take \(withIndefiniteArticle(values[0].kindName)) value")
        }
    }

    /// `btrim(x, E' \t\n\r')`.
    private func trimmed(_ s: String) -> String {
        let blanks: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r"]
        let scalars = Array(s.unicodeScalars)
        guard let first = scalars.firstIndex(where: { !blanks.contains($0) }),
              let last = scalars.lastIndex(where: { !blanks.contains($0) }) else { return "" }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[first...last])
        return String(result)
    }
}

/// A call of a policy function: its target, selector and evaluated arguments.
public struct FunctionCall: Sendable, Hashable {
    public enum Argument: Sendable, Hashable {
        case value(Value)
        /// A variable passed on its own: `$source`, `$destination`, `$manager`, …
        case variable(Variable)
        /// A related source object passed on its own (`$source.team`): its entity and key in
        /// the old store, nil when the relationship is empty.
        case object(entity: String, primaryKey: Int64?)
    }

    public var target: Variable
    public var selector: String
    public var arguments: [Argument]
}

/// A value that could not be computed, in PostgreSQL's words where the SQL path would fail the
/// same way ("division by zero", "integer out of range").
public struct EvaluationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var expression: String
    public var message: String

    public init(expression: String, message: String) {
        self.expression = expression
        self.message = message
    }

    public var description: String { "\(message) in \(expression)" }
}

/// One source row being evaluated.
struct Row {
    /// What is evaluated, spelled out only in an error (rows stream by the million).
    enum Text {
        case expression(ValueExpression)
        case predicate(FilterPredicate)
    }

    var values: [String: Value]
    var text: Text

    var expression: String {
        switch text {
        case .expression(let expression): expression.description
        case .predicate(let predicate): predicate.description
        }
    }

    func converting<T>(_ body: () throws(Conversion.Failure) -> T) throws(EvaluationError) -> T {
        do {
            return try body()
        } catch {
            throw EvaluationError(expression: expression, message: error.message)
        }
    }
}
