import Testing
@testable import ObjectModel

@Suite struct StoreNamingTests {
    @Test(arguments: [
        ("paintColor", "paint_color"),
        ("productID", "product_id"),
        ("URLString", "url_string"),
        ("name", "name"),
        ("Recipe", "recipe"),
        ("address2Line", "address2_line"),
        ("WooCommerce", "woo_commerce"),
        ("HTTPServerURL", "http_server_url"),
        ("Recipes 1", "recipes_1"),
    ])
    func snakeCaseFollowsTheContract(name: String, expected: String) {
        #expect(StoreNaming.snakeCase(name) == expected)
    }

    @Test func longNamesAreShortenedDeterministicallyAndStayDistinct() {
        let a = String(repeating: "veryLongPropertyName", count: 5) + "A"
        let b = String(repeating: "veryLongPropertyName", count: 5) + "B"
        let shortA = StoreNaming.snakeCase(a)
        #expect(shortA.utf8.count <= 63)
        #expect(shortA == StoreNaming.snakeCase(a))
        #expect(shortA != StoreNaming.snakeCase(b))
        #expect(shortA.hasPrefix("very_long_property_namevery_long_property_name"))
    }

    /// ASCII names go byte by byte (`words`): they must split exactly as the rules over
    /// Characters split them, "\r\n" (one Character, two bytes) included.
    @Test func asciiNamesSplitAsTheCharacterRulesSplitThem() {
        let pieces = ["a", "b", "Z", "Q", "URL", "ID", "x", "9", "0", "_", " ", "-", ".", "\r\n", "\t", "Ab", "aB", "HTTPServer", "v2"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<5000 {
            let name = (0..<next(9)).map { _ in pieces[next(pieces.count)] }.joined()
            #expect(StoreNaming.words(name) == StoreNaming.wordsOfCharacters(name), "\(name.debugDescription)")
        }
    }

    @Test func foreignKeyAndJoinNamesAreDerivedFromSnakeCase() {
        #expect(StoreNaming.foreignKeyColumnName(relationship: "headChef") == "head_chef_pk")
        #expect(StoreNaming.joinTableName(entity: "Recipe", relationship: "relatedTags") == "recipe__related_tags")
        #expect(StoreNaming.orderColumnName(relationship: "steps") == "steps_order")
    }
}
