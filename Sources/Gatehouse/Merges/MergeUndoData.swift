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

/// The undo record's JSON, encoded before the merge's transaction begins: encoding it inside takes most of the time
/// the transaction holds the store's write lock (about 30 of 50 ms for 232 rows; the target is < 50 ms for a merge of
/// 10 accounts, 200 sessions and 20 workspaces, `ops/bench` "merge apply").
///
/// Each entry is encoded beforehand with the row its update is expected to leave (`MergeStep.after(at:)`). Inside the
/// transaction `json(after:)` compares those with the rows read back and encodes again only the entries whose row
/// differs (on SQLite none, unless a trigger of the app's own wrote to it; on Postgres the updates, whose date
/// columns read back in the server's spelling). The record is assembled from the encoder's own fragments
/// (`MergeJSON.Fragment`), never by cutting encoded text, and is byte for byte the encoder's for the whole record
/// (`MergeTests`), so a stored record reads and undoes alike whether it was spliced or assembled.
struct MergeUndoJSON {
    private let expected: [MergeRowImage?]
    private let steps: [MergeStep]
    /// Each entry, encoded beforehand with the row it is expected to leave.
    private let entries: [MergeJSON.Fragment]
    /// Each update's step alone, for an entry whose row differs: only the row is encoded inside the transaction.
    private let stepJSON: [MergeJSON.Fragment?]
    /// The record's other members, encoded beforehand.
    private let format: MergeJSON.Fragment, appliedAt: MergeJSON.Fragment

    init(steps: [MergeStep], appliedAt: Timestamp) throws {
        self.steps = steps
        expected = steps.map { $0.after(at: appliedAt) }
        stepJSON = try steps.map { $0.operation == .update ? try MergeJSON.fragment($0) : nil }
        entries = try zip(steps, expected).map { try MergeJSON.fragment(MergeUndoData.Entry(step: $0, after: $1)) }
        format = try MergeJSON.fragment(1)
        self.appliedAt = try MergeJSON.fragment(appliedAt)
    }

    /// The record, given the rows the updates really left (nil for deletes), in step order. An entry whose row is
    /// not the one expected (a trigger of the app's own wrote to it; on Postgres, a date column reads back in the
    /// server's spelling) is encoded again, alone.
    func json(after rows: [MergeRowImage?]) throws -> String {
        precondition(rows.count == steps.count, "one row per step")
        var items: [MergeJSON.Fragment] = []
        items.reserveCapacity(steps.count)
        for index in steps.indices {
            if rows[index] == expected[index] {
                items.append(entries[index])
            } else if let row = rows[index], let step = stepJSON[index] {
                items.append(try MergeJSON.object(["after": try MergeJSON.fragment(row), "step": step]))
            } else {
                items.append(try MergeJSON.fragment(MergeUndoData.Entry(step: steps[index], after: rows[index])))
            }
        }
        // The members are MergeUndoData's coding keys; MergeTests checks the record against the encoder's own.
        return try MergeJSON.object(["appliedAt": appliedAt, "format": format, "steps": MergeJSON.array(items)]).text
    }
}
