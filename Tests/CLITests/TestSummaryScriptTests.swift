import Foundation
import Testing

/// `make test`'s last line (scripts/test-summary.sh) on crafted logs, and scripts/run-logged.sh,
/// which writes swift test's output to the log: a run once printed "675 ran, 593 passed" for a
/// run whose closing line said all 675 passed, because the result lines of 82 tests never
/// reached the log.
@Suite struct TestSummaryScriptTests {
    static let xctest = "Executed 0 tests, with 0 failures (0 unexpected) in 0.000 (0.000) seconds"

    /// The script's output for a log holding `lines`, after swift test exited `code`.
    static func summary(_ lines: [String], code: Int = 0) throws -> [String] {
        try withTemporaryFolder { folder in
            let log = folder.appendingPathComponent("log")
            try (lines.joined(separator: "\n") + "\n").write(to: log, atomically: true, encoding: .utf8)
            let result = try Pipeline.client("bash", [Self.script("test-summary.sh"), log.path, String(code)])
            #expect(result.exitCode == 0 && result.stderr.isEmpty, "\(result)")
            return result.stdoutLines
        }
    }

    static func script(_ name: String) -> String { OrchestratorBinary.repository.appendingPathComponent("scripts/\(name)").path }

    static func passed(_ name: String) -> String { "✔ Test \(name)() passed after 0.012 seconds." }

    @Test func perTestLinesThatAgreeWithTheClosingLineAreCountedWithoutAWarning() throws {
        let lines = try Self.summary([
            Self.passed("a"), "✔ Test b() passed after 0.2 seconds with 1 known issue.", "➜ Test c() skipped: \"no server\"",
            "\u{1B}[1;32m✔\u{1B}[0m Test d(x:) passed after 1.5 seconds with 2 test cases.",
            "✔ Test run with 4 tests in 2 suites passed after 1.9 seconds.", Self.xctest,
        ])
        #expect(lines == [
            "make test: 4 tests ran (Swift Testing: 4 ran, 3 passed, 0 failed, 1 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 0",
        ])
    }

    /// The CI run's case: lines lost from the log, every test passed.
    @Test func resultLinesLostFromAPassingRunAreReportedAsTheClosingLineSaysWithAWarning() throws {
        let lines = try Self.summary(
            (1...5).map { Self.passed("t\($0)") } + ["✔ Test run with 8 tests in 3 suites passed after 2.0 seconds.", Self.xctest]
        )
        #expect(lines == [
            "make test: 8 tests ran (Swift Testing: 8 ran, 8 passed, 0 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 0",
            "make test: warning: Swift Testing's closing line says 8 tests passed, but the log holds the result lines of only 5 (5 passed, 0 failed, 0 skipped): 3 lost from the log; the counts above are the closing line's",
        ])
    }

    /// A failing run's closing line does not say how many failed: the failures seen count, and
    /// the tests without a result line are named as unknown.
    @Test func aFailingRunWithLinesLostKeepsEveryFailureSeenAndNamesTheMissingResults() throws {
        let lines = try Self.summary([
            Self.passed("a"), "✘ Test b() recorded an issue at B.swift:3:5: Expectation failed: 1 == 2",
            "✘ Test b() failed after 0.3 seconds with 1 issue.", "✘ Test c(ordered:) failed after 0.4 seconds with 2 issues.",
            "✘ Test run with 6 tests in 2 suites failed after 2.0 seconds with 3 issues.", Self.xctest,
        ], code: 1)
        #expect(lines == [
            "make test: 6 tests ran (Swift Testing: 6 ran, 1 passed, 2 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 1",
            "make test: warning: Swift Testing's closing line says 6 tests ran and the run failed, but the log holds the result lines of only 3 (1 passed, 2 failed, 0 skipped): the results of 3 are not in the log",
        ])
    }

    @Test func aFailingRunWhoseFailureLinesWereAllLostSaysSo() throws {
        let lines = try Self.summary([Self.passed("a"), "✘ Test run with 2 tests in 1 suite failed after 2.0 seconds with 1 issue.", Self.xctest], code: 1)
        #expect(lines == [
            "make test: 2 tests ran (Swift Testing: 2 ran, 1 passed, 0 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 1",
            "make test: warning: Swift Testing's closing line says 2 tests ran and the run failed, but the log holds the result lines of only 1 (1 passed, 0 failed, 0 skipped): the results of 1 are not in the log",
            "make test: warning: Swift Testing's closing line says the run failed, but no \"✘ Test … failed\" line is in the log",
        ])
    }

    /// A failure seen is never hidden, even under a closing line that says the run passed.
    @Test func aFailureLineCountsEvenWhenTheClosingLineSaysPassed() throws {
        let lines = try Self.summary([
            Self.passed("a"), "✘ Test b() failed after 0.3 seconds with 1 issue.", "✔ Test run with 4 tests in 1 suite passed after 2.0 seconds.", Self.xctest,
        ])
        #expect(lines.first == "make test: 4 tests ran (Swift Testing: 4 ran, 3 passed, 1 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 0")
        #expect(lines.dropFirst().first?.hasPrefix("make test: warning: Swift Testing's closing line says 4 tests passed, but the log holds the result lines of only 2") == true, "\(lines)")
    }

    @Test func aLogWithoutClosingLinesWarns() throws {
        let lines = try Self.summary(["error: fatalError", Self.passed("a")], code: 1)
        #expect(lines == [
            "make test: 0 tests ran (Swift Testing: 0 ran, 1 passed, 0 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 1",
            "make test: warning: no Swift Testing \"Test run with N tests\" line in the log (build failure or crash?)",
            "make test: warning: no XCTest \"Executed N tests\" line in the log",
            "make test: warning: no tests ran",
        ])
    }

    /// Issue 22: the line names what served the tests (with-containers.sh writes it).
    @Test func theLineEndsWithTheServersTheTestsRanAgainst() throws {
        try withTemporaryFolder { folder in
            let log = folder.appendingPathComponent("log")
            let servers = folder.appendingPathComponent("servers")
            try "\(Self.passed("a"))\n✔ Test run with 1 test in 1 suite passed after 0.1 seconds.\n\(Self.xctest)\n".write(to: log, atomically: true, encoding: .utf8)
            try "PostgreSQL in containers: podman version 4.3.1, image localhost/orchestrator-postgres:15\n".write(to: servers, atomically: true, encoding: .utf8)
            let result = try Pipeline.client("bash", [Self.script("test-summary.sh"), log.path, "0", servers.path])
            #expect(result.stdoutLines == [
                "make test: 1 tests ran (Swift Testing: 1 ran, 1 passed, 0 failed, 0 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 0; "
                    + "PostgreSQL in containers: podman version 4.3.1, image localhost/orchestrator-postgres:15",
            ], "\(result)")
        }
    }

    /// A writer that sets O_NONBLOCK on its standard output (shared by every process of a run)
    /// and writes far more than a pipe holds while the display is not read: through
    /// `| tee LOG`, writes fail with EAGAIN and the log loses lines (the control); through
    /// run-logged.sh, the log is a file and keeps every line, and the display shows them all.
    @Test func theLogKeepsEveryLineOfAWriterThatMadeItsOutputNonBlocking() throws {
        let count = 100_000
        let writer = "perl -MFcntl -e 'fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK); "
            + "for my $i (1..\(count)) { syswrite(STDOUT, sprintf(\"line %06d of the writer, a line of some length\\n\", $i)) }'"
        let slowDisplay = "(sleep 2; cat)"
        try withTemporaryFolder { folder in
            let log = folder.appendingPathComponent("log").path
            let piped = try Pipeline.client("bash", ["-c", "\(writer) 2>&1 | tee \(log) | \(slowDisplay) | wc -l"])
            let pipedLines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
            #expect(pipedLines < count, "the control lost no line: the test proves nothing (\(piped))")

            let logged = try Pipeline.client("bash", ["-c", "bash \(Self.script("run-logged.sh")) \(log) bash -c \"$0\" | \(slowDisplay) | wc -l", writer])
            #expect(logged.exitCode == 0, "\(logged)")
            #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == count)
            #expect(logged.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(count), "the display lost lines: \(logged)")
        }
    }
}
