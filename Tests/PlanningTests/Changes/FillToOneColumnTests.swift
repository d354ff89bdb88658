import Testing
@testable import Planning

/// A to-one column filled from the links it takes over under `apply --online`; links read from a
/// join table are refused.
/// The change: Planning/Changes/FillToOneColumn.swift.
@Suite struct FillToOneColumnTests: OnlineStepFixtures, RuleRows {
    @Test func aOneToOneWhoseColumnChangesSidesIsFilledBesideTheOldColumnUnderAMirroringTrigger() throws {
        let phases = try Self.phases(
            "Alpha: {relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Alpha, inverse: partner}}}",
            "Zeta: {renamingIdentifier: Alpha, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Zeta, inverse: partner}}}"
        )
        let sql = Self.sql(phases)
        let trigger = "orchestrator_online_side_\(OnlineTrigger.digest("zeta.beta.alpha_pk"))"
        let install = try #require(phases.firstIndex { $0.installs.first == OnlineTrigger(table: "zeta", name: trigger) })
        #expect(try #require(sql.firstIndex(of: #"ALTER TABLE "s"."beta" ADD COLUMN "alpha_pk" bigint"#)) < sql.firstIndex(of: phases[install].statements[0].sql.text)!)
        let function = phases[install].statements[0].sql.text
        #expect(function.contains(#"UPDATE "s"."beta" SET "alpha_pk" = NULL WHERE "_pk" = OLD."partner_pk" AND "alpha_pk" = OLD."_pk";"#))
        #expect(function.contains(#"UPDATE "s"."beta" SET "alpha_pk" = NEW."_pk" WHERE "_pk" = NEW."partner_pk";"#))
        #expect(phases[install].statements.last?.sql.text == #"CREATE TRIGGER "\#(trigger)" AFTER INSERT OR UPDATE OR DELETE ON "s"."zeta" FOR EACH ROW EXECUTE FUNCTION "s"."\#(trigger)"()"#)
        #expect(phases[install + 1].batches?.table == "zeta")
        #expect(phases[install + 1].batches?.template.text == #"""
            UPDATE "s"."beta" AS x SET "alpha_pk" = l."_pk" FROM (SELECT "partner_pk", "_pk" FROM "s"."zeta" WHERE "partner_pk" IS NOT NULL \#
            AND "_pk" >= :from AND "_pk" < :to FOR SHARE) AS l WHERE x."_pk" = l."partner_pk"
            """#)
        #expect(sql.contains(#"ALTER TABLE "s"."beta" ADD CONSTRAINT "beta_alpha_pk_fkey" FOREIGN KEY ("alpha_pk") REFERENCES "s"."zeta" ("_pk") ON DELETE SET NULL NOT VALID"#))
        #expect(sql.filter { $0.contains(#"DROP COLUMN "partner_pk""#) } == [#"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#])
        let follower = OnlineTrigger(table: "zeta", name: trigger).truncateFollower.name
        #expect(phases.last?.statements.map(\.sql.text).suffix(5) == [
            #"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."zeta""#, #"DROP FUNCTION IF EXISTS "s"."\#(trigger)"()"#,
            #"DROP TRIGGER IF EXISTS "\#(follower)" ON "s"."zeta""#, #"DROP FUNCTION IF EXISTS "s"."\#(follower)"()"#, #"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#,
        ])
    }

    @Test func oneToOneLinksReadFromAJoinTable() {
        let change = FillToOneColumn(table: "card", column: "recipe", links: Self.joinTableLinks)
        #expect(Self.refusals(change) == [OnlineRefusal(
            .onlineUnsupportedLinkSide,
            "copy links from old_links into card.recipe: only a to-one column's links move online (docs/online-migrations.md, Limits)"
        )])
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("a rename that changes which side holds a one-to-one moves its column",
              from: "Alpha: {relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Alpha, inverse: partner}}}",
              to: "Zeta: {renamingIdentifier: Alpha, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Zeta, inverse: partner}}}", [
            #"ALTER TABLE "s"."alpha" DROP CONSTRAINT "alpha_partner_pk_fkey""#,
            #"ALTER TABLE "s"."alpha" DROP CONSTRAINT "alpha_entity_check""#,
            #"DROP INDEX "s"."alpha_partner_pk_idx""#,
            #"ALTER TABLE "s"."alpha" RENAME TO "zeta""#,
            #"ALTER TABLE "s"."zeta" RENAME CONSTRAINT "alpha_pkey" TO "zeta_pkey""#,
            #"ALTER SEQUENCE "s"."alpha__pk_seq" RENAME TO "zeta__pk_seq""#,
            #"UPDATE "s"."zeta" SET "_entity" = CASE "_entity" WHEN 'Alpha' THEN 'Zeta' END WHERE "_entity" IN ('Alpha')"#,
            #"ALTER TABLE "s"."zeta" ALTER COLUMN "_entity" SET DEFAULT 'Zeta'"#,
            #"ALTER TABLE "s"."beta" ADD COLUMN "alpha_pk" bigint"#,
            #"UPDATE "s"."beta" AS x SET "alpha_pk" = l."_pk" FROM "s"."zeta" AS l WHERE x."_pk" = l."partner_pk" AND l."partner_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#,
            #"ALTER TABLE "s"."zeta" ADD CONSTRAINT "zeta_entity_check" CHECK ("_entity" IN ('Zeta'))"#,
            #"ALTER TABLE "s"."beta" ADD CONSTRAINT "beta_alpha_pk_fkey" FOREIGN KEY ("alpha_pk") REFERENCES "s"."zeta" ("_pk") ON DELETE SET NULL"#,
            #"CREATE INDEX "beta_alpha_pk_idx" ON "s"."beta" ("alpha_pk")"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
