import Foundation

/// Durations as options take them and messages print them: `250ms`, `2s`, `1.5s`, `10m`, `1h`,
/// or a bare number in the option's own unit (`--batch-time 250` is milliseconds,
/// `--pause-timeout 90` seconds).
public enum DurationText {
    static let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]

    /// Seconds, or nil when `text` is not a positive finite duration.
    public static func seconds(_ text: String, bareUnitSeconds: Double) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var number = Substring(trimmed), scale = bareUnitSeconds
        // "ms" before "m" and "s": the longest suffix that matches.
        for unit in units.sorted(by: { $0.suffix.count > $1.suffix.count }) where trimmed.hasSuffix(unit.suffix) {
            number = trimmed.dropLast(unit.suffix.count)
            scale = unit.seconds
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else { return nil }
        return value * scale
    }

    /// `250 ms`, `2 s`, `90 s`, `10 min`, `1 h`: the largest unit that shows the value whole,
    /// else seconds.
    public static func text(seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : String(format: "%.3g s", seconds)
    }
}
