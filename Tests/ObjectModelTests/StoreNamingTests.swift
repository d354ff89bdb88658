import Testing
import ObjectModel

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

    @Test func foreignKeyAndJoinNamesAreDerivedFromSnakeCase() {
        #expect(StoreNaming.foreignKeyColumnName(relationship: "headChef") == "head_chef_pk")
        #expect(StoreNaming.joinTableName(entity: "Recipe", relationship: "relatedTags") == "recipe__related_tags")
        #expect(StoreNaming.orderColumnName(relationship: "steps") == "steps_order")
    }
}
