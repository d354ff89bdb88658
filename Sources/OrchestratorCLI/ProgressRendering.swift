import Engine
import Foundation
import JSONRendering
import ObjectModel

/// Progress events as JSON lines, plain lines and bar lines. Pure: a fixed event always gives
/// the same text, so tests pin it exactly; `ProgressReporter` decides when and where to write.
enum ProgressRendering {
    /// How a step names itself, as in `step 1 of 2: heavyweight 'A' -> 'B'`.
    static func stepTitle(kind: String, from: String?, to: String) -> String {
        "\(kind) \(from.map { "'\($0)' -> " } ?? "")'\(to)'"
    }

    /// Every field of the event, named as in `ProgressEvent`, with `event` first (so a progress
    /// line is told apart from apply's final document), then `rate` and `etaSeconds` (null when
    /// unknown). Seconds and rates are rounded to thousandths. `phase` comes after `stage`
    /// only in the events of a lightweight step's online phases, and `reason` last only in
    /// `paused` events, so every other line stays as it was.
    static func json(_ event: ProgressEvent) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("event", .string(event.kind.rawValue)),
            ("step", .number(event.step)),
            ("stepCount", .number(event.stepCount)),
            ("stepKind", .string(event.stepKind)),
            ("from", event.from.map(JSONValue.string) ?? .null),
            ("to", .string(event.to)),
            ("pass", .number(event.pass)),
            ("passCount", .number(event.passCount)),
            ("stage", .string(event.stage.name)),
            ("entityMapping", event.entityMapping.map(JSONValue.string) ?? .null),
            ("part", event.part.map { .string($0.rawValue) } ?? .null),
            ("execution", event.execution.map { .string($0.rawValue) } ?? .null),
            ("rowsDone", .number(event.rowsDone)),
            ("rowsTotal", event.rowsTotal.map(JSONValue.number) ?? .null),
            ("elapsedSeconds", thousandths(event.elapsedSeconds)),
            ("resumed", .bool(event.resumed)),
            ("rate", event.rate.map(thousandths) ?? .null),
            ("etaSeconds", event.etaSeconds.map(thousandths) ?? .null),
        ]
        if let phase = event.phase {
            fields.insert(("phase", .string(phase)), at: fields.firstIndex { $0.0 == "stage" }! + 1)
        }
        if let reason = event.reason { fields.append(("reason", .string(reason))) }
        return .object(fields)
    }

    /// The plain line for an event, or nil for `stepStarted`: apply's own `step n of m: …` line
    /// already says a step started.
    static func line(_ event: ProgressEvent) -> String? {
        let step = "step \(event.step) of \(event.stepCount): " + stepTitle(kind: event.stepKind, from: event.from, to: event.to)
        let pass = step + " pass \(event.pass) of \(event.passCount) " + passName(event)
        switch event.kind {
        case .stepStarted:
            return nil
        case .stepFinished:
            return step + ": done, \(rowsText(event.rowsDone)) in \(elapsedText(event.elapsedSeconds))"
        case .passStarted:
            return pass + ": started" + (event.rowsTotal.map { ", \(rowsText($0)) expected" } ?? "")
        case .rows:
            let done = event.rowsTotal.map { "\(event.rowsDone) of \($0) rows" } ?? rowsText(event.rowsDone)
            return pass + ": \(done), \(rateText(event.rate)), \(etaText(event.etaSeconds))"
        case .passFinished:
            if event.resumed { return pass + ": done by an earlier run (resumed)" }
            let rate = event.rate.map { " (\(rateText($0)))" } ?? ""
            return pass + ": done, \(rowsText(event.rowsDone)) in \(elapsedText(event.elapsedSeconds))" + rate
        case .paused:
            return pass + ": " + (event.reason ?? "paused")
        }
    }

    /// The progress bar line of a pass event (nil for step events), without the carriage return
    /// that redraws it: `step 1/2 pass 3/7 createInstances RecipeToRecipe (streaming)
    /// [######..................]  25% 250000/1000000 rows, 98000 rows/s, ETA 8 s`. Without a
    /// total there is no bar; a finished pass shows a full one.
    static func bar(_ event: ProgressEvent, width: Int = 24) -> String? {
        let head = "step \(event.step)/\(event.stepCount) pass \(event.pass)/\(event.passCount) " + passName(event)
        switch event.kind {
        case .stepStarted, .stepFinished, .paused:
            return nil
        case .passFinished where event.resumed:
            return head + ": done by an earlier run (resumed)"
        case .passStarted, .rows, .passFinished:
            var text = head
            if let total = event.rowsTotal {
                let fraction = event.kind == .passFinished ? 1 : min(1, total > 0 ? Double(event.rowsDone) / Double(total) : 0)
                let filled = Int(fraction * Double(width))
                let percent = String(Int(fraction * 100))
                text += " [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                text += String(repeating: " ", count: 3 - percent.count) + percent + "% \(event.rowsDone)/\(total) rows"
            } else {
                text += " " + rowsText(event.rowsDone)
            }
            if event.kind == .passFinished { return text + ", done in \(elapsedText(event.elapsedSeconds))" }
            return text + ", \(rateText(event.rate)), \(etaText(event.etaSeconds))"
        }
    }

    /// `createInstances RecipeToRecipe (streaming)`, `online: backfill …` (a lightweight step's
    /// online phase); parts the event does not have are left out.
    static func passName(_ event: ProgressEvent) -> String {
        let stage = event.phase.map { "\(event.stage.name): \($0)" } ?? event.stage.name
        return [stage, event.entityMapping, event.part.map { "(\($0.rawValue))" }, event.execution.map { "(\($0.rawValue))" }].compactMap { $0 }.joined(separator: " ")
    }

    static func rowsText(_ rows: Int) -> String { rows == 1 ? "1 row" : "\(rows) rows" }

    static func rateText(_ rate: Double?) -> String {
        rate.map { "\(Int($0.rounded())) rows/s" } ?? "rate unknown"
    }

    /// Whole seconds, rounded up: `ETA 8 s`, `ETA 2 min 05 s`, `ETA 1 h 02 min`.
    static func etaText(_ seconds: Double?) -> String {
        guard let seconds else { return "ETA unknown" }
        let whole = Int(seconds.rounded(.up))
        switch whole {
        case ..<60: return "ETA \(whole) s"
        case ..<3600: return "ETA \(whole / 60) min \(twoDigits(whole % 60)) s"
        default: return "ETA \(whole / 3600) h \(twoDigits(whole % 3600 / 60)) min"
        }
    }

    /// `40 ms` under a second, `10.2 s` under a minute, then `3 min 20 s`.
    static func elapsedText(_ seconds: Double) -> String {
        switch seconds {
        case ..<1: return "\(Int((seconds * 1000).rounded())) ms"
        case ..<60: return String(format: "%.1f s", seconds)
        default:
            let whole = Int(seconds.rounded())
            return "\(whole / 60) min \(twoDigits(whole % 60)) s"
        }
    }

    static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    static func thousandths(_ value: Double) -> JSONValue { .decimal((value * 1000).rounded() / 1000) }
}
