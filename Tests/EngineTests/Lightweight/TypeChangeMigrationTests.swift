import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Number type changes on a store holding rows: lossless ones in place, the others after a
/// check that names the rows whose value would not convert exactly (each pair's values:
/// NumberConversionValueTests).
/// Proves Planning/Changes: AlterColumnType, DataCheck, ShortestFloatText.
@Suite(integration) struct TypeChangeMigrationTests {
    typealias S = MigratedStore

    /// Boolean text as PostgreSQL prints it, as the number it converts to.
    static func number(_ text: String?) -> String? {
        switch text {
        case "t": "1"
        case "f": "0"
        default: text
        }
    }

    @Test func losslessChangesKeepEveryValueInPlace() throws {
        let model = try S.model([
            ("v1", S.version("Reading: {attributes: {flag: boolean, isSilenced: {type: boolean, optional: false, default: YES}, b: boolean, c: boolean, s: int16, i: int32, l: int64, f: float}, indexes: {byS: [s]}}")),
            ("v2", S.version("Reading: {attributes: {flag: int16, mutedStatus: {type: int32, optional: false, default: 1, renamingIdentifier: isSilenced}, b: decimal, c: double, s: float, i: double, l: decimal, f: double}, indexes: {byS: [s]}}")),
        ])
        try S.withStore(model) { connection in
            let columns = ["flag", "is_silenced", "b", "c", "s", "i", "l", "f"]
            let before = try S.rows("reading", columns, on: connection)
            #expect(before.contains { $0[1] == "t" } && before.contains { $0[1] == "f" })
            let report = try S.migrate(model, on: connection)
            let step = try #require(report.appliedSteps.first?.step)
            #expect(!step.statements.contains { $0.summary.hasPrefix("check:") }, "nothing to check")
            #expect(step.hazards.map(\.code).contains("tableRewrite"))
            let after = try S.rows("reading", ["flag", "muted_status", "b", "c", "s", "i", "l", "f"], on: connection)
            #expect(after == before.map { $0.map(Self.number) })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// All 42 changes between number types in one step, each column with a default: 0 and 1
    /// fit every change (each pair's edges: NumberConversionValueTests).
    @Test func everyChangeBetweenNumberTypesRunsOnAStoreWithRows() throws {
        let numbers: [AttributeType] = [.boolean, .integer16, .integer32, .integer64, .decimal, .float, .double]
        let pairs = numbers.flatMap { from in numbers.filter { $0 != from }.map { (from, $0) } }
        func name(_ pair: (AttributeType, AttributeType)) -> String { "\(pair.0.nativeName)To\(pair.1.nativeName.capitalized)" }
        func version(_ type: ((AttributeType, AttributeType)) -> AttributeType) -> String {
            S.version("Reading: {attributes: {" + pairs.map { "\(name($0)): {type: \(type($0).nativeName), default: 1}" }.joined(separator: ", ") + "}}")
        }
        let model = try S.model([("v1", version(\.0)), ("v2", version(\.1))])
        let columns = pairs.map { StoreNaming.columnName(attribute: name($0)) }
        try S.withStore(model, rows: 20) { connection in
            for (pair, column) in zip(pairs, columns) where pair.0 != .boolean {
                try connection.execute("UPDATE shop.reading SET \(ident: column) = _pk % 2 WHERE \(ident: column) IS NOT NULL")
            }
            let before = try S.rows("reading", columns, on: connection)
            try S.migrate(model, on: connection)
            let after = try S.rows("reading", columns, on: connection)
            #expect(after.map { $0.map(Self.number) } == before.map { $0.map(Self.number) })
            #expect(after.count == 20 && after.contains { $0.contains("1") } && after.contains { $0.contains(nil) })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func checkedChangesRunWhenEveryValueFits() throws {
        let model = try S.model([
            ("v1", S.version("Reading: {attributes: {a: int64, b: int32, c: decimal, d: double, e: int64, f: double, g: decimal, h: float}}")),
            ("v2", S.version("Reading: {attributes: {a: int16, b: boolean, c: int32, d: decimal, e: double, f: float, g: double, h: int64}}")),
        ])
        try S.withStore(model, rows: 40) { connection in
            try connection.execute("""
                UPDATE shop.reading SET a = _pk % 100 - 50, b = _pk % 2, c = _pk * 2.000, d = _pk * 0.1, e = _pk * 1000, f = _pk * 0.25, g = _pk * 0.1, h = _pk * 4
                WHERE a IS NOT NULL
                """)
            // The extremes that still fit.
            try connection.execute("""
                UPDATE shop.reading SET a = -32768, c = 2147483647, d = 1.0000000000000002, e = 9007199254740992, f = 0.10000000149011612, g = 123456.789, h = -9223372036854775808
                WHERE _pk = 1
                """)
            // A session printing 15 digits: the step prints its floating-point numbers shortest.
            try connection.execute("SET extra_float_digits = 0")
            try S.migrate(model, on: connection)
            try connection.execute("RESET extra_float_digits")
            let after = try S.rows("reading", ["a", "b", "c", "d", "e", "f", "g", "h"], where: "_pk IN (1, 2, 3)", on: connection)
            #expect(after == [
                ["1", "-32768", "t", "2147483647", "1.0000000000000002", "9.007199254740992e+15", "0.1", "123456.789", "-9223372036854775808"],
                ["2", "-48", "f", "4", "0.2", "2000", "0.5", "0.2", "8"],
                ["3", "-47", "t", "6", "0.3", "3000", "0.75", "0.3", "12"],
            ])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.reading WHERE a IS NULL AND b IS NULL").int(0, "n") == 8)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aValueThatDoesNotFitStopsTheStepNamingItsRowsAndChangesNothing() throws {
        let model = try S.model([
            ("v1", S.version("Reading: {attributes: {servings: {type: int32, optional: false, default: 2}, note: string}}")),
            ("v2", S.version("Reading: {attributes: {portions: {type: int16, optional: false, default: 2, renamingIdentifier: servings}, note: string}}")),
        ])
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.reading SET servings = CASE WHEN _pk % 2 = 0 THEN 40000 ELSE -40000 END WHERE _pk IN (5, 6, 17, 40, 41, 42, 299)")
            let before = try S.rows("reading", ["servings", "note"], on: connection)
            let failure = #expect(throws: StepFailure.self) { try S.migrate(model, on: connection) }
            let message = (failure?.underlying as? PostgresError)?.message
            #expect(message == "7 rows of reading whose servings does not fit Integer 16 (Reading.portions changed from Integer 32; integers from -32768 to 32767 fit); first _pk: 5, 6, 17, 40, 41")
            #expect(failure?.statement?.summary.hasPrefix("check: no rows of reading whose servings does not fit Integer 16") == true)
            #expect(try S.version(on: connection) == "v1")
            #expect(try columns(in: S.store, table: "reading", on: connection).first { $0.name == "servings" }?.dataType == "integer")
            #expect(try S.rows("reading", ["servings", "note"], on: connection) == before)

            // Once every value fits, the step runs.
            try connection.execute("UPDATE shop.reading SET servings = servings / 10 WHERE abs(servings) > 32767")
            let fitting = try S.rows("reading", ["servings", "note"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("reading", ["portions", "note"], on: connection) == fitting)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// A column of a hierarchy table holds the rows of every entity that has the attribute: the
    /// check counts them all; a sub-entity's own column converts too.
    @Test func aHierarchyColumnIsCheckedAndConvertedForEveryEntityHoldingIt() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string, weight: int64}}\nDog: {parent: Animal, attributes: {legs: {type: int32, optional: false, default: 4}}}\nCat: {parent: Animal}")),
            ("v2", S.version("Animal: {attributes: {name: string, weight: double}}\nDog: {parent: Animal, attributes: {legs: {type: int16, optional: false, default: 4}}}\nCat: {parent: Animal}")),
        ])
        try S.withStore(model, rows: 30) { connection in
            let dog = try #require(try S.rows("animal", [], where: "_entity = 'Dog'", on: connection).first?[0])
            let cat = try #require(try S.rows("animal", [], where: "_entity = 'Cat'", on: connection).first?[0])
            try connection.execute("UPDATE shop.animal SET weight = 9007199254740993 WHERE _pk IN (\(unsafeRaw: dog), \(unsafeRaw: cat))")
            let failure = #expect(throws: StepFailure.self) { try S.migrate(model, on: connection) }
            let keys = [dog, cat].sorted { Int($0)! < Int($1)! }.joined(separator: ", ")
            #expect((failure?.underlying as? PostgresError)?.message == "2 rows of animal whose weight does not fit Double (Animal.weight changed from Integer 64; integers from -2^53 to 2^53 fit); first _pk: \(keys)")
            #expect(try S.version(on: connection) == "v1")

            try connection.execute("UPDATE shop.animal SET weight = 9007199254740992 WHERE weight = 9007199254740993")
            // Compared as numbers: a Double prints 2^53 as 9.007199254740992e+15.
            func weightsAsNumbers(_ rows: [[String?]]) -> [[String?]] { rows.map { [$0[0], $0[1], $0[2].flatMap(Double.init).map { "\($0)" }, $0[3]] } }
            let before = try S.rows("animal", ["_entity", "weight", "legs"], on: connection)
            try S.migrate(model, on: connection)
            let after = try S.rows("animal", ["_entity", "weight", "legs"], on: connection)
            #expect(weightsAsNumbers(after) == weightsAsNumbers(before))
            #expect(after.contains { $0[2] == "9.007199254740992e+15" })
            #expect(after.contains { $0[1] == "Dog" && $0[3] != nil } && after.contains { $0[1] == "Cat" && $0[2] != nil })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Moonlight v1.0-2 -> v1.1 does both: an optional Integer 32 becomes a non-optional Boolean
    /// with a default.
    @Test func aChangeOfTypeAndOptionalityBackfillsAndConverts() throws {
        let model = try S.model([
            ("v1", S.version("Settings: {attributes: {streamingRemotely: {type: int32, default: 0}, quality: {type: int16, optional: false}}}")),
            ("v2", S.version("Settings: {attributes: {streamingRemotely: {type: boolean, optional: false, default: 0}, quality: {type: boolean}}}")),
        ])
        try S.withStore(model, rows: 20) { connection in
            try connection.execute("UPDATE shop.settings SET streaming_remotely = _pk % 2 WHERE streaming_remotely IS NOT NULL")
            try connection.execute("UPDATE shop.settings SET quality = (_pk + 1) % 2")
            let before = try S.rows("settings", ["streaming_remotely", "quality"], on: connection)
            #expect(before.contains { $0[1] == nil })
            try S.migrate(model, on: connection)
            let after = try S.rows("settings", ["streaming_remotely", "quality"], on: connection)
            #expect(after.map { $0.map(Self.number) } == before.map { [$0[0], $0[1] ?? "0", $0[2]] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Xcode keeps a Boolean's "NO" default when the type becomes a number; it reads as 0.
    @Test func anXcodeBooleanRenamedToAnIntegerKeepsItsValues() throws {
        let model = try Self.xcodeModel([
            ("Model", #"<attribute name="isSilenced" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>"#),
            ("Model 2", #"<attribute name="mutedStatus" attributeType="Integer 32" defaultValueString="NO" usesScalarValueType="YES" elementID="isSilenced"/>"#),
        ])
        #expect(model.versions[1].entity(named: "Chat")?.attribute(named: "mutedStatus")?.defaultValue == "0")
        try S.withStore(model) { connection in
            let before = try S.rows("chat", ["is_silenced"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try S.rows("chat", ["muted_status"], on: connection) == before.map { $0.map(Self.number) })
            try connection.execute("INSERT INTO shop.chat (_entity) VALUES ('Chat')")
            #expect(try connection.execute("SELECT muted_status FROM shop.chat ORDER BY _pk DESC LIMIT 1").value(0, "muted_status") == "0")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Versions of an `.xcdatamodeld` whose entity Chat holds one attribute each, parsed from
    /// their `contents` XML.
    static func xcodeModel(_ versions: [(name: String, attribute: String)]) throws -> VersionedModel {
        let parsed = try versions.map { version in
            var warnings: [ModelIssue] = []
            let xml = #"<model><entity name="Chat" representedClassName="Chat">"# + version.attribute + "</entity></model>"
            return try XcodeModelLoader.parseContents(Data(xml.utf8), name: version.name, file: "\(version.name).xcdatamodel/contents", warnings: &warnings)
        }
        return VersionedModel(name: "Chats", versions: parsed, currentVersionName: parsed.last!.name, path: "inline", format: .xcode)
    }
}
