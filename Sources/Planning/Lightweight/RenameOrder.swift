/// Renames ordered so that no name is taken when it is given: `b -> c` before `a -> b`.
enum RenameOrder {
    /// Nil when the renames go round in a cycle (`a -> b`, `b -> a`).
    static func sorted<T>(_ renames: [T], from: (T) -> String, to: (T) -> String) -> [T]? {
        var pending = renames
        var ordered: [T] = []
        while !pending.isEmpty {
            guard let next = pending.firstIndex(where: { rename in !pending.contains { from($0) == to(rename) } }) else {
                return nil
            }
            ordered.append(pending.remove(at: next))
        }
        return ordered
    }
}
