import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// The Library fixture (every part of the store contract) changed one rule at a time: each
/// filled store migrates to exactly the catalog a fresh `CREATE` of the new version gives.
/// Proves Planning/Changes: each of them, one rule at a time, against the catalog of a fresh
/// CREATE.
@Suite(integration) struct LibraryVariantTests {
    static let library = try! String(contentsOfFile: StoreCreationTests.repository + "/Tests/Fixtures/Library/Library 1.yaml", encoding: .utf8)

    static func changed(_ replacements: (String, String)...) -> String {
        var text = library
        for (old, new) in replacements {
            precondition(text.contains(old), "the Library fixture has no \(old)")
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    static let variants: [(behaviour: String, yaml: String)] = [
        ("renaming a sub-entity with a many-to-many whose owner changes side",
         changed(("  Book:\n", "  Volume:\n    renamingIdentifier: Book\n"), ("destination: Book", "destination: Volume"))),
        ("renaming an abstract root", changed(("  Item:\n", "  Thing:\n    renamingIdentifier: Item\n"), ("parent: Item", "parent: Thing"), ("destination: Item", "destination: Thing"))),
        ("removing a sub-entity", changed(("  Magazine:\n    parent: Item\n    attributes:\n      issueNumber: int16\n", ""))),
        ("adding a uniqueness constraint beside another change", changed(
            ("      books: {destination: Book, inverse: author, toMany: true, deleteRule: cascade}\n", "      books: {destination: Book, inverse: author, toMany: true, deleteRule: cascade}\n    uniquenessConstraints:\n      - [name]\n"),
            ("      code: {type: string, optional: false}\n", "      code: {type: string, optional: false}\n      floor: int16\n"))),
        ("making an ordered join table unordered and an unordered one ordered", changed(
            ("relatedTags: {destination: Tag, toMany: true, ordered: true}", "relatedTags: {destination: Tag, toMany: true}"),
            ("tags: {destination: Tag, inverse: books, toMany: true}", "tags: {destination: Tag, inverse: books, toMany: true, ordered: true}"))),
        ("making an ordered one-to-many unordered", changed(("items: {destination: Item, inverse: shelf, toMany: true, ordered: true, deleteRule: deny}", "items: {destination: Item, inverse: shelf, toMany: true, deleteRule: deny}"))),
        ("renaming an attribute and a self-referencing many-to-many", changed(
            ("      label: {type: string, optional: false}", "      caption: {type: string, optional: false, renamingIdentifier: label}"),
            ("relatedTags: {destination: Tag, toMany: true, ordered: true}", "seeAlso: {destination: Tag, toMany: true, ordered: true, renamingIdentifier: relatedTags}"))),
        ("making a sub-entity's attribute required with a default", changed(("      issueNumber: int16\n", "      issueNumber: {type: int16, optional: false, default: 1}\n"))),
        ("widening every widenable type", changed(("int16Value: {type: int16, default: 7}", "int16Value: {type: int32, default: 7}"), ("floatValue: float", "floatValue: double"), ("int64Value: int64", "int64Value: decimal"))),
        ("removing a many-to-many", changed(("      tags: {destination: Tag, inverse: books, toMany: true}\n", ""), ("      books: {destination: Book, inverse: tags, toMany: true}\n", ""))),
        ("renaming an entity that owns a join table", changed(("  Tag:\n", "  Label:\n    renamingIdentifier: Tag\n"), ("destination: Tag", "destination: Label"))),
        ("moving a sub-entity out of its hierarchy", changed(("  Magazine:\n    parent: Item\n    attributes:\n      issueNumber: int16\n", "  Magazine:\n    attributes:\n      title: {type: string, optional: false}\n      issueNumber: int16\n"))),
        ("moving a sub-entity with a required to-one, a uniqueness constraint and a many-to-many out",
         changed(("  Book:\n    parent: Item\n    attributes:\n", "  Book:\n    attributes:\n      title: {type: string, optional: false}\n"))),
        ("adding a parent above a root that others point to", changed(("  Author:\n", "  Person:\n    attributes:\n      born: date\n  Author:\n    parent: Person\n"))),
        ("moving an attribute down to one sub-entity", changed(("      addedAt: date\n", ""), ("      isbn: {type: string, optional: false}\n", "      isbn: {type: string, optional: false}\n      addedAt: date\n"))),
        ("moving an attribute up, required with a default", changed(("    attributes:\n      issueNumber: int16\n", ""), ("      addedAt: date\n", "      addedAt: date\n      issueNumber: {type: int16, optional: false, default: 0}\n"))),
        ("making a required to-one a many-to-many", changed(("author: {destination: Author, inverse: books, optional: false}", "author: {destination: Author, inverse: books, toMany: true}"))),
    ]

    @Test(arguments: variants.indices)
    func migratesToTheFreshCatalog(_ index: Int) throws {
        let variant = Self.variants[index]
        let model = try MigratedStore.model([("v1", Self.library), ("v2", variant.yaml)])
        try MigratedStore.withStore(model, rows: 100) { connection in
            let plan = try StoreMigrator(connection: connection, model: model, store: MigratedStore.store).plan()
            #expect(plan.blockers == [], "\(variant.behaviour)")
            #expect(plan.steps.map(\.kind) == [.lightweight], "\(variant.behaviour)")
            try MigratedStore.migrate(model, allowDataLoss: true, on: connection)
            try MigratedStore.expectFollowsContract(model, on: connection)
        }
    }
}
