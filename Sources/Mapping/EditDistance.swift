/// Levenshtein distance, for "did you mean".
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var row = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = row
    }
    return previous[b.count]
}

/// The name closest to `name` (case ignored), the first of equals; nil when there are none.
func closestName(to name: String, in names: [String]) -> String? {
    names.min { editDistance($0.lowercased(), name.lowercased()) < editDistance($1.lowercased(), name.lowercased()) }
}
