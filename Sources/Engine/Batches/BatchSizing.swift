import Foundation

/// How many rows the next batch takes. Fixed when there is no time target; otherwise adapted
/// after each batch so that one batch takes about `targetSeconds` (`apply --batch-time`): the
/// rate the last batch ran at, times the target, at most doubled or halved at a time (one slow
/// or fast batch does not swing it), always within `minimum...maximum`.
public struct BatchSizing: Sendable, Equatable {
    public private(set) var size: Int
    public var targetSeconds: Double?
    public var minimum: Int
    public var maximum: Int

    /// Bounds of an adapted batch: small enough that one batch's row locks and memory stay
    /// short, large enough that a batch is not mostly its transaction's overhead.
    public static let defaultMinimum = 100
    public static let defaultMaximum = 50_000

    /// `start` rows first; the bounds widen to take in a `start` outside them.
    public init(start: Int, targetSeconds: Double?, minimum: Int = Self.defaultMinimum, maximum: Int = Self.defaultMaximum) {
        precondition(start > 0 && minimum > 0 && minimum <= maximum, "batch sizes are positive, minimum <= maximum")
        size = start
        self.targetSeconds = targetSeconds
        self.minimum = min(minimum, start)
        self.maximum = max(maximum, start)
    }

    /// After a batch of `rows` that took `seconds`. A short last batch (fewer rows than asked)
    /// says nothing of the rate at this size, and changes nothing.
    public mutating func adapt(rows: Int, seconds: Double) {
        guard let targetSeconds, targetSeconds > 0, rows >= size else { return }
        let wanted = seconds > 0 ? Double(rows) * targetSeconds / seconds : Double(size * 2)
        let bounded = min(Double(size * 2), max(Double(size) / 2, wanted))
        size = min(maximum, max(minimum, Int(bounded.rounded())))
    }
}
