import Testing
@testable import Mapping

@Suite struct ArchivedExpressionDecoderTests {
    func text(_ build: (inout ExpressionArchive) -> PropertyListValue) throws -> String {
        try ArchivedExpressionDecoder.decode(archive: ExpressionArchive.bytes(build)).text()
    }

    func failure(_ build: (inout ExpressionArchive) -> PropertyListValue) -> String? {
        let error = #expect(throws: ArchiveDecodingError.self) {
            try ArchivedExpressionDecoder.decode(archive: ExpressionArchive.bytes(build)).text()
        }
        return error?.reason
    }

    @Test func constantsAreWrittenAsNSExpressionLiterals() throws {
        #expect(try text { $0.constant(.string(#"say "hi"\ now"#)) } == #""say \"hi\"\\ now""#)
        #expect(try text { $0.constant(.string("zürich")) } == #""zürich""#)
        #expect(try text { $0.constant(.integer(-42)) } == "-42")
        #expect(try text { $0.constant(.real(1.8)) } == "1.8")
        #expect(try text { $0.constant(.bool(true)) } == "YES")
        #expect(try text { $0.object("NSConstantValueExpression", ["NSConstantValue": .uid(0)]) } == "nil")
        #expect(try text { archive in
            let date = archive.object("NSDate", ["NS.time": .real(0)])
            return archive.object("NSConstantValueExpression", ["NSConstantValue": date])
        } == #"CAST(0.0, "NSDate")"#)
    }

    @Test func keyPathsInEveryArchivedFormReadAsSourceKeyPaths() throws {
        #expect(try text { $0.keyPath("source", "app.bundleIdentifier") } == "$source.app.bundleIdentifier")
        // A plain function expression calling valueForKeyPath: with a constant string.
        #expect(try text { archive in
            archive.function(archive.variable("source"), "valueForKeyPath:", [archive.constant(.string("amount"))])
        } == "$source.amount")
        // On SELF, the key path stands alone.
        #expect(try text { archive in
            let specifier = archive.object("NSKeyPathSpecifierExpression", ["NSKeyPath": archive.add(.string("amount"))])
            return archive.function(archive.object("NSSelfExpression", [:]), "valueForKeyPath:", [specifier])
        } == "amount")
        // Reserved words are escaped with #, as in $source.#size.
        #expect(try text { $0.keyPath("source", "box.size") } == "$source.box.#size")
        #expect(try text { $0.keyPath("source", "items.@count") } == "$source.items.@count")
    }

    @Test func functionsKeepTheirTargetSelectorAndArguments() throws {
        #expect(try text { archive in
            archive.function(archive.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:", [
                archive.constant(.string("ChefToChef")), archive.keyPath("source", "chef"),
            ])
        } == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#)
        #expect(try text { archive in
            archive.function(archive.variable("entityPolicy"), "migrateIconURL", [])
        } == #"FUNCTION($entityPolicy, "migrateIconURL")"#)
        #expect(try text { archive in archive.builtin("uppercase:", [archive.keyPath("source", "name")]) } == "uppercase:($source.name)")
        #expect(try text { archive in archive.builtin("now", []) } == "now()")
        #expect(try text { archive in
            archive.object("NSAggregateExpression", ["NSCollection": archive.array([archive.constant(.integer(1)), archive.constant(.integer(2))])])
        } == "{1, 2}")
    }

    @Test func arithmeticIsWrittenInfixWithTheParenthesesPrecedenceNeeds() throws {
        // Fahrenheit to Celsius: (t - 32.0) / 1.8.
        #expect(try text { archive in
            let difference = archive.builtin("from:subtract:", [archive.keyPath("source", "temperature"), archive.constant(.real(32))])
            return archive.builtin("divide:by:", [difference, archive.constant(.real(1.8))])
        } == "($source.temperature - 32.0) / 1.8")
        #expect(try text { archive in
            let product = archive.builtin("multiply:by:", [archive.keyPath("source", "a"), archive.keyPath("source", "b")])
            return archive.builtin("add:to:", [product, archive.constant(.integer(1))])
        } == "$source.a * $source.b + 1")
        #expect(try text { archive in
            let inner = archive.builtin("from:subtract:", [archive.keyPath("source", "b"), archive.keyPath("source", "c")])
            return archive.builtin("from:subtract:", [archive.keyPath("source", "a"), inner])
        } == "$source.a - ($source.b - $source.c)")
        #expect(try text { archive in
            archive.builtin("raise:toPower:", [archive.keyPath("source", "a"), archive.constant(.integer(2))])
        } == "$source.a ** 2")
    }

    @Test func whatNSExpressionSyntaxCannotSayIsAnErrorNamingIt() {
        #expect(failure { $0.object("NSSubqueryExpression", ["NSExpressionType": .integer(13)]) }
            == "NSSubqueryExpression is not supported (expected a constant, variable, key path, function or aggregate expression)")
        #expect(failure { archive in
            archive.object("NSConstantValueExpression", ["NSConstantValue": archive.object("NSDecimalNumber", [:])])
        } == "a constant of class NSDecimalNumber has no NSExpression spelling")
        #expect(failure { archive in
            let operand = archive.object("NSConstantValueExpression", ["NSConstantValueClassName": archive.add(.string("NSFileManager"))])
            return archive.function(operand, "defaultManager", [])
        } == "a function called on the class NSFileManager")
        #expect(failure { $0.keyPath("source", "odd key") } == "the key 'odd key' cannot be written in NSExpression syntax")
        #expect(failure { $0.object("NSFunctionExpression", [:]) } == "a function expression without a selector")
        #expect(failure { _ in .uid(99) } == "reference 99 to no archived object")
    }

    @Test func anExpressionThatContainsItselfIsRejected() {
        // Object 1 is a function whose operand is object 1.
        let bytes = BinaryPlistWriter.bytes(.dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$top": .dictionary(["root": .uid(1)]),
            "$objects": .array([
                .string("$null"),
                .dictionary(["$class": .uid(2), "NSSelectorName": .uid(3), "NSOperand": .uid(1)]),
                .dictionary(["$classname": .string("NSFunctionExpression")]),
                .string("f"),
            ]),
        ]))
        let error = #expect(throws: ArchiveDecodingError.self) { try ArchivedExpressionDecoder.decode(archive: bytes) }
        #expect(error?.reason == "the expression is nested too deeply")
    }
}
