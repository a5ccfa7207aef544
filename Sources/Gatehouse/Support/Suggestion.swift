/// "Did you mean …?" for mistyped commands, options and keys.
public enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be what was meant.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= max(2, word.count / 3) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance over the first 64 characters of each string (the bound keeps a long, hostile word cheap).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        distance(Array(a.prefix(64)), Array(b.prefix(64)), limit: nil)!
    }

    /// Levenshtein distance over the first 64 characters of each string when it is at most `limit`; nil beyond it,
    /// found without finishing the table once every way through it costs more.
    ///
    ///     Suggestion.editDistance("postgress", "postgres", limit: 2)   // 1
    ///     Suggestion.editDistance("mysql", "postgres", limit: 2)       // nil
    public static func editDistance(_ a: String, _ b: String, limit: Int) -> Int? {
        distance(Array(a.prefix(64)), Array(b.prefix(64)), limit: max(0, limit))
    }

    private static func distance(_ a: [Character], _ b: [Character], limit: Int?) -> Int? {
        if let limit, abs(a.count - b.count) > limit { return nil }
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            // A row's least cell never falls in the rows below it.
            if let limit, current.min()! > limit { return nil }
            previous = current
        }
        if let limit, previous[b.count] > limit { return nil }
        return previous[b.count]
    }
}
