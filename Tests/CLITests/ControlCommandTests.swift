import Foundation
import Testing
import PostgresClient
import TestSupport

/// `orchestrator control pause|resume` and `apply --batch-time`/`--pause-timeout`, as a user
/// runs them, on the bench's lightweight step.
@Suite(integration) struct ControlCommandTests {
    @Test func aPausedStoresApplySaysSoStopsAfterThePauseTimeoutAndContinuesOnceResumed() throws {
        try TestDatabase.withFreshDatabase { url in
            try Pipeline.benchAtVersionOne(url)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }

            let pause = try OrchestratorBinary.run(["control", "pause", "--store", "recipes"], databaseURL: url)
            #expect(pause.exitCode == 0, "\(pause)")
            #expect(pause.stdoutLines.first?.hasPrefix("store recipes: paused: its runs wait after their current batch") == true, "\(pause)")
            #expect(try connection.execute("SELECT paused FROM orchestrator.controls WHERE store = 'recipes'").bool(0, "paused") == true)

            let stopped = try OrchestratorBinary.run(
                ["apply", "--online", "--batch-size", "2", "--pause-timeout", "1", "--model", "bench/model", "--store", "recipes"], databaseURL: url
            )
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stdoutLines.contains { $0.contains(": paused by orchestrator control (by ") }, "\(stopped)")
            #expect(stopped.stderr.contains("paused by orchestrator control"), "\(stopped)")
            #expect(stopped.stderr.contains("for longer than --pause-timeout (1 s)"), "\(stopped)")
            #expect(stopped.stderr.contains("apply again continues"), "\(stopped)")
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.online_progress WHERE store = 'recipes'").int(0, "n") == 1)

            let resume = try OrchestratorBinary.run(["control", "resume", "--store", "recipes", "--format", "json"], databaseURL: url)
            #expect(resume.exitCode == 0, "\(resume)")
            #expect(resume.stdout.contains(#""paused":false"#) && resume.stdout.contains(#""wasPaused":true"#), "\(resume)")

            let apply = try OrchestratorBinary.run(["apply", "--online", "--batch-time", "50ms", "--model", "bench/model", "--store", "recipes"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute("SELECT count(*) FROM recipes.recipe WHERE rating = 0").rows.first?.first == "4")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").rows.first?.first == "Bench 2")
        }
    }

    @Test(arguments: [
        (["control", "pause"], "control needs --store"),
        (["apply", "--batch-time", "0", "--model", "bench/model"], "--batch-time must be a duration of 1 ms or more"),
        (["apply", "--pause-timeout", "soon", "--model", "bench/model"], "--pause-timeout must be a positive duration"),
        // Refused before any connection: the subscriber's address is never tried.
        (["apply", "--subscriber-wait", "soon", "--subscriber", "postgres://nowhere.invalid/db", "--model", "bench/model"], "--subscriber-wait must be a positive duration"),
    ])
    func aMissingStoreOrABadDurationIsAUsageError(arguments: [String], message: String) throws {
        let result = try OrchestratorBinary.run(arguments, databaseURL: "postgres://nowhere.invalid/db")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
