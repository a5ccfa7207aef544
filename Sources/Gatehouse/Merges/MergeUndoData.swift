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
/// Each entry is encoded beforehand with the row its update is expected to leave (`MergeStep.after(at:)`). Inside the
/// transaction `json(after:)` compares those with the rows read back and encodes again only the entries whose row
/// differs (on SQLite none, unless a trigger of the app's own wrote to it; on Postgres the updates, whose date
/// columns read back in the server's spelling). The text is byte for byte the encoder's for the whole record.
struct MergeUndoJSON {
    private let expected: [MergeRowImage?]
    private let steps: [MergeStep]
    /// Each entry's JSON, encoded beforehand with the row it is expected to leave.
    private let entries: [String]
    /// Each update's step alone, for an entry whose row differs: `{"after":` + the row + `,"step":` + this + `}` is
    /// the entry's JSON (sorted keys, no whitespace), so only the row is encoded inside the transaction.
    private let stepJSON: [String?]
    /// The record's JSON around its entries: `{"appliedAt":…,"format":1,"steps":[` and `]}`.
    private let head: String, tail: String

    init(steps: [MergeStep], appliedAt: Timestamp) throws {
        self.steps = steps
        expected = steps.map { $0.after(at: appliedAt) }
        stepJSON = try steps.map { $0.operation == .update ? try MergeJSON.string($0) : nil }
        entries = try zip(steps, expected).map { try MergeJSON.string(MergeUndoData.Entry(step: $0, after: $1)) }
        // With sorted keys and no whitespace, the record is its envelope with the entries spliced into "steps".
        let envelope = try MergeJSON.string(MergeUndoData(format: 1, appliedAt: appliedAt, steps: []))
        guard envelope.hasSuffix("\"steps\":[]}") else {
            throw GatehouseError("the undo record's JSON did not come out as MergeJSON writes it (sorted keys, no whitespace); nothing was changed")
        }
        head = String(envelope.dropLast(2))
        tail = "]}"
    }

    /// The record, given the rows the updates really left (nil for deletes), in step order. An entry whose row is
    /// not the one expected (a trigger of the app's own wrote to it; on Postgres, a date column reads back in the
    /// server's spelling) is encoded again, alone.
    func json(after rows: [MergeRowImage?]) throws -> String {
        precondition(rows.count == steps.count, "one row per step")
        var text = head
        for index in steps.indices {
            if index > 0 { text += "," }
            if rows[index] == expected[index] {
                text += entries[index]
            } else if let row = rows[index], let step = stepJSON[index] {
                text += "{\"after\":" + (try MergeJSON.string(row)) + ",\"step\":" + step + "}"
            } else {
                text += try MergeJSON.string(MergeUndoData.Entry(step: steps[index], after: rows[index]))
            }
        }
        return text + tail
    }
}
