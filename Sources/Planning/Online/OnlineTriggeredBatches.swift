import SQLBuilding

extension OnlinePhase {
    /// The two phases of a change kept right by a trigger while it backfills: the trigger
    /// installed (its function and the row trigger, in one short transaction), then batches
    /// bringing the rows already there to what the trigger makes of the rows written meanwhile.
    /// `does` says what the trigger does to the rows written, for the summaries; a trigger
    /// mirroring rows elsewhere says what a `TRUNCATE` of its table clears (`OnlineTruncates`).
    static func triggeredBatches(
        _ trigger: OnlineTrigger, in schema: String, timing: String, body: SQL, does: String, batches: BatchedStatement, summary: String,
        truncate: TruncateFollowing? = nil
    ) -> [OnlinePhase] {
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: timing, body: body, summary: does),
            summary: "trigger on \(trigger.table): \(does)"
        )
        install.installs = [trigger]
        if let truncate { install.following(truncate: truncate, of: trigger, in: schema) }
        return [install, .batched(batches, summary: summary)]
    }
}
