import Foundation
import ObjectModel
import Planning
import PostgresClient

/// A heavyweight step run by `apply --expand` (docs/rolling-deploys.md, "Heavyweight steps"):
/// the online step's wait before its switch-over is the time two versions are live. The old
/// release writes the store's tables (at its version) and the rounds carry its writes into the
/// staging tables; the new version is read, never written, through `NewVersionViews`.
/// `complete` gives the proceed (`ExpansionCompletion`), `rollback` drops the staging work
/// (`HeavyweightExpansionRollback`).
struct HeavyweightExpansion {
    var run: HeavyweightRun
    var views: NewVersionViews

    private var connection: PostgresConnection { run.connection }
    private var store: String { run.migrator.store }

    /// The old and the new version, with their model hashes, as the history records them.
    private var versions: (old: (name: String, hash: String), new: (name: String, hash: String)) {
        let old = run.migrator.model.version(named: views.oldVersion)!, new = run.migrator.model.version(named: views.version)!
        return ((old.name, VersionHash.hashes(of: old).model), (new.name, VersionHash.hashes(of: new).model))
    }

    /// When the wait for `complete` starts, in one transaction: the views (made again when a run
    /// stopped meanwhile is continued: the expansion's row says they are its own), and the
    /// first time the expansion's row (`ExpansionRecord`, which `status`, `complete` and
    /// `rollback` read) and an `expand` row in the history.
    func serve() throws {
        let started = Date()
        try run.options.executionPolicy.transaction(on: connection) {
            let isKnown = try ExpansionRecord.read(store: store, on: connection) != nil
            if isKnown { try connection.execute(views.drop) }
            for statement in views.statements { try connection.execute(statement) }
            guard !isKnown else { return }
            let expansion = Expansion(oldVersion: views.oldVersion, newVersion: views.version, viewsSchema: views.schema, deferred: [])
            try ExpansionRecord.insert(expansion, store: store, on: connection)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "expand", from: versions.old, to: versions.new, statements: views.statements, started: started, on: connection
            )
        }
    }

    /// In the swap's transaction, under the write guard, once the last
    /// round ran: the views' schema is renamed out of the way (`NewVersionViews.retire`), the
    /// expansion's row goes, and the history gets its `complete` row (the step's own row
    /// follows it, with the swap).
    func complete() throws {
        // The retired name is ours or free: a schema of that name orchestrator did not make
        // for this store is never dropped (the swap fails, naming it, and nothing changes).
        try StoreSchemas.requireOwnable(views.retiredSchema, role: .retired, store: store, on: connection)
        try connection.execute(views.dropRetired)
        try connection.execute(views.retire)
        try StoreSchemas.register(views.retiredSchema, role: .retired, store: store, version: views.version, on: connection)
        try ExpansionRecord.delete(store: store, on: connection)
        try StoreMetadataWriter.recordEvent(
            store: store, kind: "complete", from: versions.old, to: versions.new, statements: [views.retire, views.dropRetired], started: Date(), on: connection
        )
    }

    /// Once the swap committed and the guard is gone: the retired views go, as a retired old
    /// store does (`StoreCleanup`, bounded by the policy's lock timeout); what cannot go now is
    /// returned, and the next `apply` of the store removes it (`StoreCleanup.removeLeftovers`).
    func dropRetired() -> DeferredCleanup? {
        StoreCleanup.clean(views.retiredSchema, role: .retired, policy: run.options.executionPolicy, on: connection)
    }
}
