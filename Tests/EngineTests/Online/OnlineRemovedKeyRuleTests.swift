import Foundation
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A to-one whose relationship the new version removes (here renamed without a renaming
/// identifier: removed and another added, as HabitRPG 25 -> 26 renames `commonUser`) keeps its
/// foreign key's delete rule acting until the switch-over under `apply --online`: the
/// application is on the old version until then, and the offline migration of its writes
/// deletes a flag's steps with it (CASCADE) or refuses the delete (a denying key). The column
/// was dropped first, and a flag deleted after that left its steps online only
/// (CorpusOnlineWriterTests, HabitRPG 25 -> 46, now and then under load).
/// Proves Planning/Changes: DropColumn, AddColumn, AddForeignKey (with
/// Online/OnlineReplacedKeys.swift).
@Suite(integration) struct OnlineRemovedKeyRuleTests {
    typealias S = MigratedStore
    typealias Rules = OnlineClearedLinkRuleTests

    static func model(rule: String) throws -> VersionedModel {
        func version(_ toMany: String, _ toOne: String) -> String {
            """
            Flag: {attributes: {name: string}, relationships: {\(toMany): {destination: Step, inverse: \(toOne), toMany: true, deleteRule: \(rule)}}}
            Step: {attributes: {label: string}, relationships: {\(toOne): {destination: Flag, inverse: \(toMany)}}}
            """
        }
        return try S.model([("v1", S.version(version("steps", "user"))), ("v2", S.version(version("tutorialSteps", "userFlags")))])
    }

    @Test(arguments: [("cascade", "c"), ("deny", "r")])
    func aRemovedLinksDeleteRuleActsUntilTheSwitchOver(rule: String, action: String) throws {
        let model = try Self.model(rule: rule)
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: { _, _ in }) { connection, writer, url in
            let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
            let phases = try #require(step.phases?.phases).map(\.summary)
            #expect(phases.last?.contains("drop column step.user_pk") == true, "\(phases)")
            #expect(!phases.dropLast().contains { $0.contains("drop column step.user_pk") }, "\(phases)")
            try writer.both({ "UPDATE \(ident: $0, "step") SET user_pk = _pk WHERE _pk <= 30" }, on: connection)
            let application = try PostgresConnection(url: url)
            defer { application.close() }
            var outcomes: [Rules.Outcome] = []
            var failure: Error?
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(
                options: ApplyOptions(allowDataLoss: true, batchSize: 7, online: true),
                onProgress: { event in
                    guard event.kind == .passStarted, event.phase?.hasPrefix("switch over") == true else { return }
                    do {
                        outcomes = try application.transaction { try (1...3).map { try Rules.deleteInBoth(writer: writer, animal: $0, table: "flag", on: application) } }
                    } catch { failure = error }
                }
            )
            #expect(failure == nil, "\(String(describing: failure))")
            let expected: Rules.Outcome = rule == "cascade" ? .deleted : .denied(Self.denial)
            #expect(outcomes == [expected, expected, expected])
            let steps = try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "step") WHERE _pk <= 3").int(0, "n")
            #expect(steps == (rule == "cascade" ? 0 : 3))
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }

    static let denial = "update or delete on table \"flag\" violates foreign key constraint \"step_user_pk_fkey\" on table \"step\""
}
