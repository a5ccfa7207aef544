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

/// The undo record's JSON, encoded before the merge's transaction begins: encoding it inside took most of the time
/// the transaction held the store's write lock (about 30 of 50 ms for 232 rows; the target is < 50 ms for a merge of
/// 10 accounts, 200 sessions and 20 workspaces, `ops/bench` "merge apply").
///
/// The record is encoded whole, with the rows each update is expected to leave (`MergeStep.after(at:)`). Inside the
/// transaction `json(after:)` compares those with the rows read back: when they match (always, unless a trigger of
/// the app's own wrote to them) the text encoded beforehand is the record; otherwise the record is encoded again,
/// whole, with the rows as they are.
struct MergeUndoJSON {
    private let appliedAt: Timestamp
    private let steps: [MergeStep]
    private let expected: [MergeRowImage?]
    private let expectedText: String

    init(steps: [MergeStep], appliedAt: Timestamp) throws {
        self.appliedAt = appliedAt
        self.steps = steps
        expected = steps.map { $0.after(at: appliedAt) }
        expectedText = try Self.encode(steps: steps, after: expected, appliedAt: appliedAt)
    }

    /// The record, given the rows the updates really left (nil for deletes), in step order.
    func json(after rows: [MergeRowImage?]) throws -> String {
        precondition(rows.count == steps.count, "one row per step")
        return rows == expected ? expectedText : try Self.encode(steps: steps, after: rows, appliedAt: appliedAt)
    }

    private static func encode(steps: [MergeStep], after rows: [MergeRowImage?], appliedAt: Timestamp) throws -> String {
        try MergeJSON.string(MergeUndoData(format: 1, appliedAt: appliedAt, steps: zip(steps, rows).map { MergeUndoData.Entry(step: $0, after: $1) }))
    }
}
