import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `status` compares the store with the contract of its recorded version; `plan` and `apply`
/// refuse a store that lacks or changed objects, extra ones do not stop them.
@Suite("drift: status, status --check, plan and apply")
struct DriftTests {
    typealias R = RecipesStore

    @Test("status --check exits 0 up to date, 2 to create or migrate, 1 on error; status alone exits 0", integration)
    func checkExitCodes() throws {
        try TestDatabase.withFreshDatabase { url in
            let missing = ["store recipes: does not exist; `orchestrator apply` creates it at 'Recipes 3'"]
            for (arguments, code) in [(["status"], Int32(0)), (["status", "--check"], 2)] {
                let result = try R.run(arguments, url: url)
                #expect(result.exitCode == code && result.stdoutLines == missing && result.stderr.isEmpty, "\(arguments): \(result)")
            }
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try R.create(at: "Recipes 2", url: url, on: connection)
            let behind = R.statusLines(at: "Recipes 2") + ["drift: none from the contract of 'Recipes 2'"]
            for (arguments, code) in [(["status"], Int32(0)), (["status", "--check"], 2)] {
                let result = try R.run(arguments, url: url)
                #expect(result.exitCode == code && result.stdoutLines == behind && result.stderr.isEmpty, "\(arguments): \(result)")
            }
            let json = try R.run(["status", "--check", "--format", "json"], url: url)
            #expect(json.exitCode == 2, "\(json)")
            #expect(try jsonObject(json.stdout)["driftCheckedAgainst"] as? String == "Recipes 2", "\(json)")
            #expect(try R.driftEntries(json.stdout) == [], "\(json)")

            #expect(try R.run(["apply"], url: url).exitCode == 0)
            let upToDate = R.statusLines(at: "Recipes 3") + ["drift: none from the contract of 'Recipes 3'"]
            for arguments in [["status"], ["status", "--check"]] {
                let result = try R.run(arguments, url: url)
                #expect(result.exitCode == 0 && result.stdoutLines == upToDate && result.stderr.isEmpty, "\(arguments): \(result)")
            }

            try connection.execute("CREATE SCHEMA other; CREATE TABLE other.t (x int)")
            let foreign = try R.run(["status", "--check", "--store", "other"], url: url)
            #expect(foreign.exitCode == 1, "\(foreign)")
            #expect(foreign.stdoutLines == ["store other: schema exists but is not an orchestrator store (no metadata)"], "\(foreign)")
        }
        let unreachable = try R.run(["status", "--check", "--database-url", "postgres://nobody@127.0.0.1:1/none"], url: "")
        #expect(unreachable.exitCode == 1 && unreachable.stdout.isEmpty, "\(unreachable)")
        #expect(unreachable.stderrLines.count == 1 && unreachable.stderr.hasPrefix("error: cannot connect to "), "\(unreachable)")
    }

    @Test("a column added by hand is extra: listed by status, not blocking --check, plan or apply, and kept", integration)
    func columnAddedByHand() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try R.create(at: "Recipes 2", url: url, on: connection)
            try connection.execute("ALTER TABLE recipes.recipe ADD COLUMN nickname text DEFAULT 'x'")
            let extra = "extra column recipe.nickname (found: text default 'x'::text)"

            let status = try R.run(["status", "--check"], url: url)
            #expect(status.exitCode == 2, "\(status)")
            #expect(status.stdoutLines == R.statusLines(at: "Recipes 2") + [
                "drift: 1 difference from the contract of 'Recipes 2' (none blocks plan and apply)", "  " + extra,
            ], "\(status)")
            let json = try R.run(["status", "--format", "json"], url: url)
            #expect(json.exitCode == 0, "\(json)")
            #expect(try R.driftEntries(json.stdout) == ["extra|column|recipe|nickname|null|null|text default 'x'::text"], "\(json)")

            let plan = try R.run(["plan"], url: url)
            #expect(plan.exitCode == 0 && plan.stderr.isEmpty, "\(plan)")
            let apply = try R.run(["apply"], url: url)
            #expect(apply.exitCode == 0, "\(apply)")
            let after = try R.run(["status", "--check"], url: url)
            #expect(after.exitCode == 0, "\(after)")
            #expect(after.stdoutLines == R.statusLines(at: "Recipes 3") + [
                "drift: 1 difference from the contract of 'Recipes 3' (none blocks plan and apply)", "  " + extra,
            ], "\(after)")
            #expect(try connection.execute("SELECT count(*) AS n FROM recipes.recipe WHERE nickname = 'x'").value(0, "n") == "3")
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var change: String
        var drift: [String]
        var json: [String]
    }

    static let blockingCases = [
        Case(
            description: "a dropped constraint",
            change: "ALTER TABLE recipes.ingredient DROP CONSTRAINT ingredient_recipe_pk_fkey",
            drift: ["missing foreign key ingredient_recipe_pk_fkey on ingredient (expected: (recipe_pk) references recipe (_pk) on delete cascade on update no action)"],
            json: ["missing|foreign key|ingredient|null|ingredient_recipe_pk_fkey|(recipe_pk) references recipe (_pk) on delete cascade on update no action|null"]
        ),
        Case(
            description: "a changed type",
            change: "ALTER TABLE recipes.recipe ALTER COLUMN rating TYPE integer",
            drift: ["changed column recipe.rating: expected smallint, found integer"],
            json: ["changed|column|recipe|rating|null|smallint|integer"]
        ),
        Case(
            description: "a renamed table",
            change: "ALTER TABLE recipes.chef RENAME TO cook",
            drift: [
                "missing table chef",
                "missing foreign key recipe_chef_pk_fkey on recipe (expected: (chef_pk) references chef (_pk) on delete set null on update no action)",
                "extra foreign key recipe_chef_pk_fkey on recipe (found: (chef_pk) references cook (_pk) on delete set null on update no action)",
                "extra table cook",
            ],
            json: [
                "missing|table|chef|null|null|table|null",
                "missing|foreign key|recipe|null|recipe_chef_pk_fkey|(chef_pk) references chef (_pk) on delete set null on update no action|null",
                "extra|foreign key|recipe|null|recipe_chef_pk_fkey|null|(chef_pk) references cook (_pk) on delete set null on update no action",
                "extra|table|cook|null|null|null|table",
            ]
        ),
    ]

    @Test("a store that lacks or changed objects: status lists them, --check exits 1, plan and apply refuse with nothing changed", integration, arguments: blockingCases)
    func blockingDrift(_ drift: Case) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try R.create(at: "Recipes 2", url: url, on: connection)
            try connection.execute(SQL(unsafeRaw: drift.change))
            let blocking = drift.drift.filter { !$0.hasPrefix("extra") }.count
            let listed = R.statusLines(at: "Recipes 2") + [
                "drift: \(drift.drift.count) difference\(drift.drift.count == 1 ? "" : "s") from the contract of 'Recipes 2' (\(blocking) block\(blocking == 1 ? "s" : "") plan and apply)",
            ] + drift.drift.map { "  " + $0 }

            let status = try R.run(["status"], url: url)
            #expect(status.exitCode == 0 && status.stdoutLines == listed && status.stderr.isEmpty, "\(status)")
            let check = try R.run(["status", "--check"], url: url)
            #expect(check.exitCode == 1 && check.stdoutLines == listed && check.stderr.isEmpty, "\(check)")
            let json = try R.run(["status", "--format", "json"], url: url)
            #expect(json.exitCode == 0, "\(json)")
            #expect(try R.driftEntries(json.stdout) == drift.json, "\(json)")

            let before = try R.fingerprint(on: connection)
            let refused = drift.drift.filter { !$0.hasPrefix("extra") }.map { "store recipes differs from the contract of its version 'Recipes 2': \($0)" }
            var expected = refused
            expected[expected.count - 1] += "; nothing was changed (put back what is missing or changed as the contract has it; `orchestrator status` lists every difference)"
            let errorText = expected.count == 1 ? "error: \(expected[0])\n" : "error: \(expected.count) problems\n" + expected.map { "  \($0)\n" }.joined()
            for command in ["plan", "apply"] {
                let result = try R.run([command], url: url)
                #expect(result.exitCode == 1 && result.stdout.isEmpty && result.stderr == errorText, "\(command): \(result)")
            }
            #expect(try R.fingerprint(on: connection) == before, "plan or apply changed the store")
        }
    }
}
