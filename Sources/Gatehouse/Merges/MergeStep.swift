import Storage

/// One row-level change of a merge: update some columns of one row, or delete one row. A plan is an
/// ordered list of these; apply runs them, the SQL emitter prints them, undo reverses them.
public struct MergeStep: Sendable, Equatable, Codable {
    /// What happens to the row.
    public enum Operation: String, Sendable, Codable {
        case update
        case delete
    }

    /// What the change is part of, for the readable diff (`accounts`, `sessions`, `sync:workspaces`, ...).
    public let group: String
    public let operation: Operation
    public let table: String
    /// The row's key.
    public let key: MergeRowKey
    /// The whole row as the plan read it.
    public let before: MergeRowImage
    /// For an update: the columns' new values.
    public let set: [String: MergeValue]
    /// For an update: date columns set to the time of applying, each in its own encoding.
    public let touch: [String: DateEncoding]
    /// Why, in words: "moves to U1", "U2's session: deleted".
    public let reason: String

    public init(group: String, operation: Operation, table: String, key: MergeRowKey, before: MergeRowImage,
                set: [String: MergeValue] = [:], touch: [String: DateEncoding] = [:], reason: String) {
        self.group = group
        self.operation = operation
        self.table = table
        self.key = key
        self.before = before
        self.set = set
        self.touch = touch
        self.reason = reason
    }

    /// Every column an update writes.
    public var changedColumns: [String] { (Array(set.keys) + Array(touch.keys)).sorted() }

    /// The values an update writes when applied at `time`.
    func assignments(at time: Timestamp) -> [String: MergeValue] {
        var values = set
        for (column, encoding) in touch { values[column] = MergeValue(encoding.encode(time)) }
        return values
    }

    /// The row after an update applied at `time`; nil for a delete.
    func after(at time: Timestamp) -> MergeRowImage? {
        operation == .update ? before.with(assignments(at: time)) : nil
    }
}
