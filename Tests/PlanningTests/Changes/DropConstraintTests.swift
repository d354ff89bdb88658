import Testing
@testable import Planning

/// A CHECK constraint dropped when it changes (the `_entity` check of a hierarchy that gains or
/// loses a concrete entity); online, in a phase of its own.
/// The change: Planning/Changes/DropConstraint.swift.
@Suite struct DropConstraintTests: RuleRows, OnlineStepFixtures {
    /// Rule rows: a model edit and the golden SQL of the step that plans it offline, then the
    /// SQL of the phases `apply --online` plans for it.
    static let rows: [(RuleCase, online: [String])] = [
        (.init("removing a sub-entity drops the _entity check before listing the entities left", from: M.animals, to: "Animal: {attributes: {name: string}}", [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#,
            #"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#,
            #"ALTER TABLE "s"."animal" DROP COLUMN "bark""#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "_entity" SET DEFAULT 'Animal'"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal'))"#,
        ]), online: [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#,
            #"CREATE OR REPLACE FUNCTION "s"."orchestrator_online_removed_75791fe1"() RETURNS trigger LANGUAGE plpgsql AS $online$BEGIN IF NEW."_entity" IN ('Dog') THEN RETURN NULL; END IF; RETURN NEW; END$online$"#,
            #"DROP TRIGGER IF EXISTS "orchestrator_online_removed_75791fe1" ON "s"."animal""#,
            #"CREATE TRIGGER "orchestrator_online_removed_75791fe1" BEFORE INSERT OR UPDATE OF _entity ON "s"."animal" FOR EACH ROW EXECUTE FUNCTION "s"."orchestrator_online_removed_75791fe1"()"#,
            #"SET LOCAL orchestrator.online_step = 'on'; DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog') AND "_pk" >= :from AND "_pk" < :to"#,
            #"ALTER TABLE "s"."animal" DROP COLUMN "bark""#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "_entity" SET DEFAULT 'Animal'"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal')) NOT VALID"#,
            #"ALTER TABLE "s"."animal" VALIDATE CONSTRAINT "animal_entity_check""#,
            #"DROP TRIGGER IF EXISTS "orchestrator_online_removed_75791fe1" ON "s"."animal""#,
            #"DROP FUNCTION IF EXISTS "s"."orchestrator_online_removed_75791fe1"()"#,
        ]),
    ]

    @Test(arguments: rows.map(\.0))
    func sql(_ row: RuleCase) throws { try Self.expectOfflineSQL(row) }

    @Test(arguments: rows)
    func onlineSQL(_ row: RuleCase, online: [String]) throws { try Self.expectOnlineSQL(row, online) }
}
