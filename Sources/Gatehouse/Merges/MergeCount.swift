/// How many rows of a table hold a value in a column, before and after a merge: U2's accounts
/// before (3) and after (0), say. The emitted SQL checks them, so rows added on a remote copy since
/// the plan (a new session of U2, a new workspace) stop the script instead of being swept along.
public struct MergeCount: Sendable, Equatable, Codable {
    public let table: String
    public let column: String
    public let value: MergeValue
    public let before: Int
    public let after: Int

    /// Counts for each (table, column, value), the after count derived from the steps.
    static func derive(_ watched: [(table: String, column: String, value: MergeValue, before: Int)], steps: [MergeStep]) -> [MergeCount] {
        watched.map { item in
            var after = item.before
            for step in steps where step.table == item.table {
                if step.before.values[item.column] == item.value { after -= 1 }
                if step.operation == .update, step.before.with(step.set).values[item.column] == item.value { after += 1 }
            }
            return MergeCount(table: item.table, column: item.column, value: item.value, before: item.before, after: after)
        }
    }
}
