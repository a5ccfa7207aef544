/// What a merge keeps so that it can be undone: every step with the full row before it and, for an
/// update, the full row after it. Stored as JSON in `gatehouse_merges.undo_data`:
///
///     {"format": 1, "appliedAt": "2026-11-30T03:48:03.123Z",
///      "steps": [{"step": {group, operation, table, key, before, set, touch, reason}, "after": {table, rowid, values} | null}]}
///
/// Values are typed (`MergeValue`): text as a JSON string, `{"int": "42"}`, `{"real": 1.5}`, `{"blob": "hex"}`, null.
public struct MergeUndoData: Sendable, Codable {
    /// One applied step and the row it left.
    public struct Entry: Sendable, Codable {
        public let step: MergeStep
        /// The row after an update; nil for a delete.
        public let after: MergeRowImage?
    }

    /// The layout version of this JSON.
    public let format: Int
    public let appliedAt: Timestamp
    public let steps: [Entry]
}
