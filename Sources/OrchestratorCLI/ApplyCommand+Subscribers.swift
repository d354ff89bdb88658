import ArgumentParser
import Engine
import JSONRendering
import Planning
import PostgresClient

extension ApplyCommand {
    /// `apply --subscriber`: every subscriber connected first (an unreachable one stops the
    /// command with nothing changed), then `ReplicatedApply`; each side's report as `apply`
    /// prints one, the subscribers' after the publisher's (in JSON, under `subscribers`).
    func applyWithSubscribers(
        _ migrator: StoreMigrator, options: ApplyOptions, onStep: @escaping (Int, Int, PlannedStep) -> Void, progress: ProgressReporter,
        onLockWait: @escaping LockWaitHandler
    ) throws {
        var connections: [PostgresConnection] = []
        defer { connections.forEach { $0.close() } }
        var subscribers: [ReplicatedApply.Subscriber] = []
        for url in subscriber {
            let connection = try connect(url, lockWait: lockOptions.lockWait)
            connections.append(connection)
            var theirs = migrator
            theirs.connection = connection
            subscribers.append(ReplicatedApply.Subscriber(name: redactedConnectionString(url), migrator: theirs))
        }
        var replicated = ReplicatedApply(publisher: migrator, subscribers: subscribers)
        if let seconds = try subscriberWaitSeconds() { replicated.waitSeconds = seconds }
        let reports = try replicated
            .apply(options: options, onStep: onStep, onProgress: progress.report, onLockWait: onLockWait)
        progress.finish()
        let store = migrator.store
        for report in [reports.publisher] + reports.subscribers { report.deferredCleanups.forEach { printNotice($0.description) } }
        switch formatOptions.format {
        case .json:
            guard case .object(var fields) = ApplyRendering.json(reports.publisher, store: store) else { return }
            fields.append(("subscribers", .array(zip(subscribers, reports.subscribers).map { subscriber, report in
                guard case .object(let theirs) = ApplyRendering.json(report, store: store) else { return .null }
                return .object([("subscriber", .string(subscriber.name))] + theirs)
            })))
            printLine(JSONValue.object(fields).rendered)
        case .text:
            ApplyRendering.text(reports.publisher, store: store).forEach { printLine($0) }
            for (subscriber, report) in zip(subscribers, reports.subscribers) {
                ApplyRendering.text(report, store: store).forEach { printLine("subscriber \(subscriber.name): \($0)") }
            }
        }
    }
}

extension ApplyCommand {
    /// `--subscriber-wait` in seconds; nil when not given. Checked in `validate`, before any
    /// connection.
    func subscriberWaitSeconds() throws -> Double? {
        guard let text = subscriberWait else { return nil }
        guard let seconds = DurationText.seconds(text, bareUnitSeconds: 1) else {
            throw ValidationError("--subscriber-wait must be a positive duration: seconds, or 10m, 1h (got '\(text)')")
        }
        return seconds
    }
}
