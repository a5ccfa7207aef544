/// How many rows of a table hold a value in a column, before and after a merge: U2's accounts
/// before (3) and after (0), say. The emitted SQL checks them, so rows added on a remote copy since
/// the plan (a new session of U2, a new workspace) stop the script instead of being swept along.
/// A composite key's count matches every column of the key (`column` and `alsoMatching`).
public struct MergeCount: Sendable, Equatable, Codable {
    /// One more column a counted row must hold a value in.
    public struct Match: Sendable, Equatable, Codable {
        public let column: String
        public let value: MergeValue
    }

    public let table: String
    public let column: String
    public let value: MergeValue
    /// The other columns of a composite key, in key order; absent (not stored) for a key of one column, so a plan
    /// stored without it reads as a key of one column.
    public let alsoMatching: [Match]?
    public let before: Int
    public let after: Int

    /// Every (column, value) a counted row holds, `column` first.
    var matches: [Match] { [Match(column: column, value: value)] + (alsoMatching ?? []) }

    /// The counts a plan watches: the rows of `table` whose `columns` hold `values` (pairwise) numbered `before`.
    struct Watched {
        let table: String
        let matches: [Match]
        let before: Int

        init(_ table: String, _ columns: [String], _ values: [MergeValue], before: Int) {
            self.table = table
            self.matches = zip(columns, values).map { Match(column: $0, value: $1) }
            self.before = before
        }

        func holds(in image: MergeRowImage) -> Bool { matches.allSatisfy { image.values[$0.column] == $0.value } }
    }

    /// Counts for each watched set of rows, the after count derived from the steps.
    static func derive(_ watched: [Watched], steps: [MergeStep]) -> [MergeCount] {
        watched.map { item in
            var after = item.before
            for step in steps where step.table == item.table {
                if item.holds(in: step.before) { after -= 1 }
                if step.operation == .update, item.holds(in: step.before.with(step.set)) { after += 1 }
            }
            let first = item.matches[0], rest = Array(item.matches.dropFirst())
            return MergeCount(table: item.table, column: first.column, value: first.value, alsoMatching: rest.isEmpty ? nil : rest,
                              before: item.before, after: after)
        }
    }
}
