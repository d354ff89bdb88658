import ObjectModel

/// An element matched across versions: an entity, or a property of one.
protocol RenamableElement {
    var name: String { get }
    var renamingIdentifier: String? { get }
}

extension Entity: RenamableElement {}
extension Attribute: RenamableElement {}
extension Relationship: RenamableElement {}

extension RenamableElement {
    /// The identifier when it differs from the name; an identifier equal to the name says nothing.
    var distinctRenamingIdentifier: String? {
        renamingIdentifier.flatMap { $0 == name ? nil : $0 }
    }
}

/// Pairs the elements of a source and a destination (entities of two versions, or properties of
/// two matched entities) by renaming identifier, then by name.
///
/// Real files carry stale identifiers, so an identifier renames only when the element's own name
/// is new to the source and the identifier names a source element the destination no longer has
/// under that name. An identifier naming nothing in the source, naming the element itself, naming
/// a source element the destination still has, or carried by an element the source already has
/// under its name, is ignored, and the element matches by its own name: a stale identifier never
/// turns a kept element into drop + add.
struct NameMatching<Element: RenamableElement> {
    struct Pair {
        var source: Element?
        var destination: Element?
        /// The source element's position in the source, for ordering removed elements.
        fileprivate var sourceIndex: Int?
    }

    /// A destination element whose identifier names a source element an earlier one took.
    struct Contest {
        var destination: Element
        var identifier: String
        var winner: Element
    }

    /// Each destination element in order with its source (nil: added), then each unmatched
    /// source element in order (removed).
    private(set) var pairs: [Pair] = []
    private(set) var contests: [Contest] = []

    init(source: [Element], destination: [Element]) {
        let sourceNames = Set(source.map(\.name))
        let destinationNames = Set(destination.map(\.name))
        var sourceOf: [Int?] = Array(repeating: nil, count: destination.count)
        var claimedBy: [Int: Int] = [:]

        // 1. Renames: the source element the identifier names (by name, else by the source's own
        //    identifier, as Core Data matches identifiers to identifiers along a chain of
        //    renames), provided the source lacks the element's name and the destination gave
        //    the named element's name up.
        for (index, element) in destination.enumerated() where !sourceNames.contains(element.name) {
            guard let identifier = element.distinctRenamingIdentifier,
                  let named = source.firstIndex(where: { $0.name == identifier })
                    ?? source.firstIndex(where: { $0.renamingIdentifier == identifier }),
                  !destinationNames.contains(source[named].name)
            else { continue }
            if let winner = claimedBy[named] {
                contests.append(Contest(destination: element, identifier: identifier, winner: destination[winner]))
                continue
            }
            sourceOf[index] = named
            claimedBy[named] = index
        }

        // 2. Names: the unclaimed source element of the same name.
        for (index, element) in destination.enumerated() where sourceOf[index] == nil {
            if let named = source.firstIndex(where: { $0.name == element.name }), claimedBy[named] == nil {
                sourceOf[index] = named
                claimedBy[named] = index
            }
        }

        // 3. Shared identifiers (Core Data's own rule), for what is still unmatched: a source
        //    element renamed with identifier X, then renamed back to X without one.
        for (index, element) in destination.enumerated() where sourceOf[index] == nil {
            let canonical = element.renamingIdentifier ?? element.name
            let candidates = source.indices.filter { claimedBy[$0] == nil && (source[$0].renamingIdentifier ?? source[$0].name) == canonical }
            if candidates.count == 1 {
                sourceOf[index] = candidates[0]
                claimedBy[candidates[0]] = index
            }
        }

        pairs = destination.indices.map { Pair(source: sourceOf[$0].map { source[$0] }, destination: destination[$0], sourceIndex: sourceOf[$0]) }
        pairs += source.indices.filter { claimedBy[$0] == nil }.map { Pair(source: source[$0], destination: nil, sourceIndex: $0) }
    }

    /// Undoes the matches `isKept` rejects: their destination element becomes added and their
    /// source element removed, among the removed ones in source order.
    mutating func unpair(keeping isKept: (_ source: Element, _ destination: Element) -> Bool) {
        var kept: [Pair] = []
        var removed: [Pair] = []
        for pair in pairs {
            if let source = pair.source, let destination = pair.destination, !isKept(source, destination) {
                kept.append(Pair(source: nil, destination: destination, sourceIndex: nil))
                removed.append(Pair(source: source, destination: nil, sourceIndex: pair.sourceIndex))
            } else if pair.destination == nil {
                removed.append(pair)
            } else {
                kept.append(pair)
            }
        }
        pairs = kept + removed.sorted { $0.sourceIndex! < $1.sourceIndex! }
    }
}
