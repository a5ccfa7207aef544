/// A plan as `merge plan` prints it: what moves, what is deleted, the conflicts and their decisions,
/// warnings, and the plan id. Values of secret-looking columns (tokens, passwords) are never shown.
public struct MergePlanView: Sendable, Codable {
    /// One row change.
    public struct Change: Sendable, Codable {
        public let group: String
        public let operation: String
        public let table: String
        public let key: String
        /// Column → new value (secret-looking columns redacted; touched dates as "(time of apply)").
        public let set: [String: String]
        public let reason: String
    }

    public let planID: String?
    public let fingerprint: String
    public let source: String
    public let target: String
    public let sourceEmail: String
    public let targetEmail: String
    public let decisions: MergeDecisions
    public let conflicts: [MergeConflict]
    public let unresolved: Int
    public let warnings: [String]
    public let changes: [Change]
    public let rowsUpdated: Int
    public let rowsDeleted: Int
    public let references: [String]

    static let secretLike = ["password", "token", "secret"]

    public init(_ plan: MergePlan) {
        planID = plan.id
        fingerprint = plan.fingerprint
        source = plan.source.rawValue
        target = plan.target.rawValue
        sourceEmail = plan.sourceEmail
        targetEmail = plan.targetEmail
        decisions = plan.decisions
        conflicts = plan.conflicts
        unresolved = plan.unresolved.count
        warnings = plan.warnings
        references = plan.references
        rowsUpdated = plan.steps.filter { $0.operation == .update }.count
        rowsDeleted = plan.steps.filter { $0.operation == .delete }.count
        changes = plan.steps.map { step in
            var set: [String: String] = [:]
            for (column, value) in step.set {
                let secret = Self.secretLike.contains { column.lowercased().contains($0) }
                set[column] = secret ? "[redacted]" : (value.sql.isNull ? "NULL" : value.sql.string ?? "(\(value.sql.typeName))")
            }
            for column in step.touch.keys { set[column] = "(time of apply)" }
            return Change(group: step.group, operation: step.operation.rawValue, table: step.table, key: step.key.description,
                          set: set, reason: step.reason)
        }
    }
}
