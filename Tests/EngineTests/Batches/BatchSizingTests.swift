import Testing
@testable import Engine

/// `--batch-time`: each batch's size follows the time its predecessor took, within bounds.
@Suite struct BatchSizingTests {
    @Test func withoutATimeTargetEveryBatchKeepsItsSize() {
        var sizing = BatchSizing(start: 7, targetSeconds: nil)
        sizing.adapt(rows: 7, seconds: 10)
        sizing.adapt(rows: 7, seconds: 0.000_001)
        #expect(sizing.size == 7)
    }

    @Test func aBatchFasterThanTheTargetGrowsTheNextAtMostTwofoldAndASlowerOneShrinksItAtMostByHalf() {
        var sizing = BatchSizing(start: 1000, targetSeconds: 0.1)
        sizing.adapt(rows: 1000, seconds: 0.001)
        #expect(sizing.size == 2000)
        sizing.adapt(rows: 2000, seconds: 0.08)
        #expect(sizing.size == 2500)
        sizing.adapt(rows: 2500, seconds: 10)
        #expect(sizing.size == 1250)
    }

    @Test func anAdaptedSizeStaysWithinItsBoundsWhichTakeInTheStartingSize() {
        var fast = BatchSizing(start: 40_000, targetSeconds: 1)
        for _ in 0..<5 { fast.adapt(rows: fast.size, seconds: 0.01) }
        #expect(fast.size == BatchSizing.defaultMaximum)
        var slow = BatchSizing(start: 400, targetSeconds: 0.01)
        for _ in 0..<5 { slow.adapt(rows: slow.size, seconds: 5) }
        #expect(slow.size == BatchSizing.defaultMinimum)
        var tiny = BatchSizing(start: 7, targetSeconds: 0.01)
        tiny.adapt(rows: 7, seconds: 5)
        #expect(tiny.size == 7, "a start below the minimum is the minimum")
    }

    @Test func aShortLastBatchSaysNothingOfTheRate() {
        var sizing = BatchSizing(start: 1000, targetSeconds: 0.1)
        sizing.adapt(rows: 3, seconds: 0.000_01)
        #expect(sizing.size == 1000)
    }

    @Test(arguments: [
        ("250", 0.25), ("250ms", 0.25), ("1s", 1.0), ("1.5s", 1.5), ("2m", 120.0), ("1h", 3600.0), (" 40 ms ", 0.04),
    ])
    func aBatchTimeIsMillisecondsOrADuration(text: String, seconds: Double) {
        #expect(DurationText.seconds(text, bareUnitSeconds: 0.001) == seconds)
    }

    @Test(arguments: ["", "0", "-1s", "fast", "1d", "nan", "inf"])
    func aDurationThatIsNotPositiveAndFiniteIsRefused(text: String) {
        #expect(DurationText.seconds(text, bareUnitSeconds: 1) == nil)
    }

    @Test func durationsPrintInTheLargestWholeUnit() {
        #expect(DurationText.text(seconds: 3600) == "1 h")
        #expect(DurationText.text(seconds: 600) == "10 min")
        #expect(DurationText.text(seconds: 1.5) == "1.5 s")
        #expect(DurationText.text(seconds: 0.25) == "250 ms")
    }
}
