import Testing
import SQLBuilding
@testable import Planning

/// What the application gave the old objects, as GRANT, ALTER … OWNER and COMMENT statements
/// for the new ones of the same name: identifiers quoted, comments inline literals, privilege
/// names the only unquoted text.
@Suite struct CarriedAccessTests {
    typealias A = CarriedAccess

    static let app = A.Privilege(grantee: "app \"role\"", privilege: "SELECT", isGrantable: false)

    static func relation(_ name: String, _ kind: A.Relation.Kind = .table, owner: String = "owner", privileges: [A.Privilege] = [], comment: String? = nil, columns: [A.Column] = []) -> A.Relation {
        A.Relation(name: name, kind: kind, owner: owner, privileges: privileges, comment: comment, columns: columns)
    }

    @Test func grantsOwnersAndCommentsGoToTheObjectsOfTheSameNameAndKind() {
        let old = A(schema: Self.relation("s", owner: "app", privileges: [A.Privilege(grantee: "reader", privilege: "USAGE", isGrantable: false)], comment: "the store"), relations: [
            Self.relation("animal", owner: "app", privileges: [
                Self.app, A.Privilege(grantee: "app \"role\"", privilege: "INSERT", isGrantable: false),
                A.Privilege(grantee: nil, privilege: "SELECT", isGrantable: true),
            ], comment: "it's kept", columns: [
                A.Column(name: "name", privileges: [Self.app], comment: "shown"),
                A.Column(name: "gone", privileges: [Self.app], comment: "dropped"),
            ]),
            Self.relation("animal__pk_seq", .sequence, owner: "app", privileges: [A.Privilege(grantee: "app \"role\"", privilege: "USAGE", isGrantable: false)]),
            Self.relation("dropped", privileges: [Self.app]),
            Self.relation("now_a_sequence", privileges: [Self.app]),
        ])
        let new = A(schema: Self.relation("s"), relations: [
            Self.relation("animal", columns: [A.Column(name: "name", privileges: [], comment: nil)]),
            Self.relation("animal__pk_seq", .sequence),
            Self.relation("now_a_sequence", .sequence),
        ])
        #expect(old.statements(to: new, in: "s").map(\.sql.text) == [
            #"ALTER SCHEMA "s" OWNER TO "app""#,
            #"GRANT USAGE ON SCHEMA "s" TO "reader""#,
            #"COMMENT ON SCHEMA "s" IS 'the store'"#,
            #"ALTER TABLE "s"."animal" OWNER TO "app""#,
            #"GRANT SELECT, INSERT ON TABLE "s"."animal" TO "app ""role""""#,
            #"GRANT SELECT ON TABLE "s"."animal" TO PUBLIC WITH GRANT OPTION"#,
            #"COMMENT ON TABLE "s"."animal" IS 'it''s kept'"#,
            #"GRANT SELECT ("name") ON TABLE "s"."animal" TO "app ""role""""#,
            #"COMMENT ON COLUMN "s"."animal"."name" IS 'shown'"#,
            #"GRANT USAGE ON SEQUENCE "s"."animal__pk_seq" TO "app ""role""""#,
        ])
    }

    @Test func nothingIsIssuedWhereTheNewObjectsAlreadyHaveItOrTheOldHadNothing() {
        let same = A(schema: Self.relation("s", comment: "c"), relations: [Self.relation("animal", comment: "c", columns: [A.Column(name: "name", privileges: [], comment: "d")])])
        #expect(same.statements(to: same, in: "s").isEmpty)
        let tablesOnly = A(schema: nil, relations: [Self.relation("animal")])
        #expect(tablesOnly.statements(to: A(schema: Self.relation("s", owner: "other"), relations: [Self.relation("animal")]), in: "s").isEmpty)
    }
}
