import ArgumentParser
import Engine

extension ApplyCommand {
    /// `--max-replica-lag`, `--max-slot-lag`, `--slot` and `--throttle-timeout` as the run's
    /// `ReplicationThrottle` (docs/replication.md, "Throttling").
    func throttle() throws -> ReplicationThrottle {
        var replicaLag: Double? = ReplicationThrottle.defaultMaxReplicaLagSeconds
        if let text = maxReplicaLag {
            if Double(text.trimmingCharacters(in: .whitespaces)) == 0 {
                replicaLag = nil
            } else {
                guard let seconds = DurationText.seconds(text, bareUnitSeconds: 1) else {
                    throw ValidationError("--max-replica-lag must be a positive duration: seconds, or 500ms, 1m; 0 turns it off (got '\(text)')")
                }
                replicaLag = seconds
            }
        }
        if let maxSlotLag, maxSlotLag <= 0 { throw ValidationError("--max-slot-lag must be a positive number of bytes") }
        let timeout = try throttleTimeout.map { text in
            guard let seconds = DurationText.seconds(text, bareUnitSeconds: 1) else {
                throw ValidationError("--throttle-timeout must be a positive duration: seconds, or 10m, 1h (got '\(text)')")
            }
            return seconds
        }
        if !slot.isEmpty && maxSlotLag == nil { throw ValidationError("--slot names the slots --max-slot-lag watches: give --max-slot-lag too") }
        let throttle = ReplicationThrottle(maxReplicaLagSeconds: replicaLag, maxSlotLagBytes: maxSlotLag, timeoutSeconds: timeout ?? ReplicationThrottle.defaultTimeoutSeconds)
        throttle.slots = slot
        return throttle
    }

    /// `--postpone-timeout` in seconds (default `ApplyOptions.defaultPostponeTimeoutSeconds`).
    func postponeTimeoutSeconds() throws -> Double {
        guard let text = postponeTimeout else { return ApplyOptions.defaultPostponeTimeoutSeconds }
        guard let seconds = DurationText.seconds(text, bareUnitSeconds: 1) else {
            throw ValidationError("--postpone-timeout must be a positive duration: seconds, or 30m, 24h (got '\(text)')")
        }
        return seconds
    }
}
