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

/// The undo record's JSON, encoded before the merge's transaction begins: with Foundation's encoder it took most
/// of the time the transaction held the store's write lock (about 30 of 50 ms for 232 rows).
///
/// Each step is encoded with the row its update is expected to leave (`MergeStep.after(at:)`). Inside the
/// transaction `json(after:)` only compares those with the rows read back; a row that differs (a trigger of the
/// app's own wrote to it, say) is encoded there and then. The text is exactly what `MergeJSON.string` makes of
/// the whole `MergeUndoData`.
struct MergeUndoJSON {
    private let steps: [MergeStep]
    private let expected: [MergeRowImage?]
    private let stepTexts: [String]
    private let expectedTexts: [String?]
    /// `{"appliedAt":…,"format":1,"steps":` — the keys before `steps` in sorted order.
    private let head: String

    init(steps: [MergeStep], appliedAt: Timestamp) throws {
        self.steps = steps
        expected = steps.map { $0.after(at: appliedAt) }
        stepTexts = try steps.map { try MergeJSON.string($0) }
        expectedTexts = try expected.map { try $0.map { try MergeJSON.string($0) } }
        let empty = try MergeJSON.string(MergeUndoData(format: 1, appliedAt: appliedAt, steps: []))
        guard empty.hasSuffix("[]}") else { throw GatehouseError("unexpected undo record layout: \(empty.prefix(80))", fix: "report this as a bug") }
        head = String(empty.dropLast(3))
    }

    /// The record, given the rows the updates really left (nil for deletes), in step order.
    func json(after rows: [MergeRowImage?]) throws -> String {
        precondition(rows.count == steps.count, "one row per step")
        var text = head + "["
        for index in steps.indices {
            if index > 0 { text += "," }
            text += "{"
            if let row = rows[index] {
                text += "\"after\":"
                text += row == expected[index] ? expectedTexts[index]! : try MergeJSON.string(row)
                text += ","
            }
            text += "\"step\":" + stepTexts[index] + "}"
        }
        return text + "]}"
    }
}
