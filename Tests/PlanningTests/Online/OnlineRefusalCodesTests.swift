import Testing
@testable import Planning

/// Each way a lightweight change refuses `apply --online` carries its stable code
/// (`OnlineRefusal.Code`, docs/cli-output.md) beside its message, which names the change. No
/// change a real model pair plans reaches them any more (`CorpusOnlineTests`: every corpus pair
/// plans online), so each is pinned on the change that carries it, planned by `OnlinePlanner`.
@Suite struct OnlineRefusalCodesTests {
    static func refusals(_ change: any SchemaChange) -> [OnlineRefusal] {
        OnlinePlanner.plan([change], schema: "s").refusals
    }

    static let joinTableLinks = SourceLinks(table: "old_links", a: "owner", b: "target", requiredNotNull: nil, origins: [.table("old_links")])

    @Test func linksWhoseOwnersTableIsNotKnown() {
        let change = FillJoinTable(table: "links", ownerColumn: "owner", targetColumn: "target", orderColumns: [], links: Self.joinTableLinks)
        #expect(Self.refusals(change) == [OnlineRefusal(
            .onlineUnsupportedLinkOwners,
            "copy links from old_links into links: the table of the links' owners is not known, so the copy's batches cannot walk them (docs/online-migrations.md, Limits)"
        )])
    }

    @Test func positionsAcrossRowsWhoseOwnersTableIsNotKnown() {
        let change = FillJoinTable(
            table: "links", ownerColumn: "owner", targetColumn: "target", orderColumns: [(column: "position", side: .target)],
            links: Self.joinTableLinks, referencedTables: ["target": "target_table"]
        )
        // Walked by the targets' table, the owners' table for the numbering is missing.
        var walked = change
        walked.links.ownerFilter = SourceLinks.OwnerFilter(table: "owner_table", entities: ["Owner"])
        #expect(Self.refusals(walked) == [OnlineRefusal(
            .onlineUnsupportedPositionOwners,
            "copy links from old_links into links: position numbers the links of each owner across rows, and the table of its owners is not known (docs/online-migrations.md, Limits)"
        )])
        let order = FillOrderColumn.oneToMany(table: "ingredient", column: "position", ownerColumn: "recipe", ownerTable: nil)
        #expect(Self.refusals(order) == [OnlineRefusal(
            .onlineUnsupportedPositionOwners,
            "number ingredient.position: the table of its owners is not known, so its batches cannot walk them (docs/online-migrations.md, Limits)"
        )])
    }

    @Test func oneToOneLinksReadFromAJoinTable() {
        let change = FillToOneColumn(table: "card", column: "recipe", links: Self.joinTableLinks)
        #expect(Self.refusals(change) == [OnlineRefusal(
            .onlineUnsupportedLinkSide,
            "copy links from old_links into card.recipe: only a to-one column's links move online (docs/online-migrations.md, Limits)"
        )])
    }

    @Test func aStepWithoutItsOnlineFormIsRefusedWithTheNotPlannedCode() {
        let statement = PlannedStatement("SELECT 1", lock: .none, summary: "a statement")
        #expect(PlannedStep(body: .inPlace, from: "v1", to: "v2", statements: [statement]).onlineRefusals.map(\.code) == [.onlineUnsupportedNotPlanned])
        #expect(PlannedStep(body: .staged(.sample()), from: "v1", to: "v2", statements: [statement]).onlineRefusals.map(\.code) == [.onlineUnsupportedUntracedPath])
        #expect(PlannedStep(body: .create, from: nil, to: "v1", statements: [statement]).onlineRefusals == [])
    }
}
