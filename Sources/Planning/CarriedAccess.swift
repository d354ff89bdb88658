import SQLBuilding

/// What the application's database setup gave a store's schema and tables that a migration
/// rebuilding them would lose (docs/store-format.md, "What the application added"): privileges
/// (schema, table, column, sequence), the owner, comments. Read from the old objects before a
/// heavyweight swap or an online switch-over, and given to the new ones in the same transaction.
public struct CarriedAccess: Sendable, Hashable {
    /// One `aclexplode` row: a privilege, to whom (nil: PUBLIC), and whether it may be passed on.
    public struct Privilege: Sendable, Hashable {
        public var grantee: String?
        public var privilege: String
        public var isGrantable: Bool

        public init(grantee: String?, privilege: String, isGrantable: Bool) {
            self.grantee = grantee
            self.privilege = privilege
            self.isGrantable = isGrantable
        }
    }

    public struct Column: Sendable, Hashable {
        public var name: String
        public var privileges: [Privilege]
        public var comment: String?

        public init(name: String, privileges: [Privilege], comment: String?) {
            self.name = name
            self.privileges = privileges
            self.comment = comment
        }
    }

    public struct Relation: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            case table = "TABLE"
            case sequence = "SEQUENCE"
        }

        public var name: String
        public var kind: Kind
        public var owner: String
        /// Without the owner's own privileges, which come with ownership.
        public var privileges: [Privilege]
        public var comment: String?
        public var columns: [Column]

        public init(name: String, kind: Kind, owner: String, privileges: [Privilege], comment: String?, columns: [Column]) {
            self.name = name
            self.kind = kind
            self.owner = owner
            self.privileges = privileges
            self.comment = comment
            self.columns = columns
        }
    }

    /// The schema's own owner, privileges and comment; nil when only some tables are carried.
    public var schema: Relation?
    public var relations: [Relation]

    public init(schema: Relation?, relations: [Relation]) {
        self.schema = schema
        self.relations = relations
    }

    /// The privilege names PostgreSQL's ACLs hold: the only text a GRANT takes unquoted.
    public static let privilegeKeywords: Set<String> = [
        "SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "USAGE", "CREATE", "CONNECT", "TEMPORARY", "EXECUTE", "MAINTAIN",
    ]

    /// What gives the objects of `current` (the new ones, read the same way, named as the old
    /// ones are) what `self` (the old ones) had, in `schema`:
    /// 1. the schema's owner, privileges and comment;
    /// 2. per relation present in both with the same kind: the owner where it differs (a table's;
    ///    its identity sequence follows it), the privileges, the comment where it differs;
    /// 3. per column present in both: its privileges and comment.
    /// Relations or columns the new store no longer has are left, as the migration drops them.
    public func statements(to current: CarriedAccess, in schema: String) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        if let old = self.schema, let new = current.schema {
            let target: SQL = "SCHEMA \(ident: schema)"
            if old.owner != new.owner {
                statements.append(PlannedStatement("ALTER SCHEMA \(ident: schema) OWNER TO \(ident: old.owner)", lock: .none, summary: "\(schema) keeps its owner \(old.owner)"))
            }
            statements += grants(old.privileges, on: target, columns: nil, named: schema)
            if let comment = old.comment, comment != new.comment {
                statements.append(PlannedStatement("COMMENT ON \(target) IS \(literal: comment)", lock: .none, summary: "\(schema) keeps its comment"))
            }
        }
        let now = Dictionary(current.relations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for old in relations.sorted(by: { ($0.kind == .table ? 0 : 1, $0.name) < ($1.kind == .table ? 0 : 1, $1.name) }) {
            guard let new = now[old.name], new.kind == old.kind else { continue }
            let target: SQL = "\(unsafeRaw: old.kind.rawValue) \(ident: schema, old.name)"
            if old.kind == .table, old.owner != new.owner {
                statements.append(PlannedStatement("ALTER TABLE \(ident: schema, old.name) OWNER TO \(ident: old.owner)", lock: .accessExclusive, summary: "\(schema).\(old.name) keeps its owner \(old.owner)"))
            }
            statements += grants(old.privileges, on: target, columns: nil, named: "\(schema).\(old.name)")
            if let comment = old.comment, comment != new.comment {
                statements.append(PlannedStatement("COMMENT ON \(target) IS \(literal: comment)", lock: .accessExclusive, summary: "\(schema).\(old.name) keeps its comment"))
            }
            let columns = Dictionary(new.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for column in old.columns {
                guard let newColumn = columns[column.name] else { continue }
                statements += grants(column.privileges, on: target, columns: column.name, named: "\(schema).\(old.name).\(column.name)")
                if let comment = column.comment, comment != newColumn.comment {
                    statements.append(PlannedStatement(
                        "COMMENT ON COLUMN \(ident: schema, old.name).\(ident: column.name) IS \(literal: comment)", lock: .accessExclusive,
                        summary: "\(schema).\(old.name).\(column.name) keeps its comment"
                    ))
                }
            }
        }
        return statements
    }

    /// One GRANT per grantee and grant option, the privileges in the order PostgreSQL lists them.
    private func grants(_ privileges: [Privilege], on target: SQL, columns column: String?, named name: String) -> [PlannedStatement] {
        var groups: [(grantee: String?, isGrantable: Bool, privileges: [String])] = []
        for entry in privileges {
            precondition(Self.privilegeKeywords.contains(entry.privilege), "unknown privilege '\(entry.privilege)' in an ACL of \(name)")
            if let index = groups.firstIndex(where: { $0.grantee == entry.grantee && $0.isGrantable == entry.isGrantable }) {
                if !groups[index].privileges.contains(entry.privilege) { groups[index].privileges.append(entry.privilege) }
            } else {
                groups.append((entry.grantee, entry.isGrantable, [entry.privilege]))
            }
        }
        return groups.map { group in
            let list = SQL.joined(group.privileges.map { privilege in
                column.map { "\(unsafeRaw: privilege) (\(ident: $0))" } ?? "\(unsafeRaw: privilege)"
            }, separator: ", ")
            let grantee: SQL = group.grantee.map { "\(ident: $0)" } ?? "PUBLIC"
            let option: SQL = group.isGrantable ? " WITH GRANT OPTION" : ""
            return PlannedStatement(
                "GRANT \(list) ON \(target) TO \(grantee)\(option)", lock: .none,
                summary: "\(name) keeps \(group.privileges.joined(separator: ", ")) for \(group.grantee ?? "PUBLIC")"
            )
        }
    }
}
