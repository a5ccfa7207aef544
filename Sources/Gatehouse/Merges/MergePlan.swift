import Storage

/// A reviewed merge of U2 (source) into U1 (target): the ordered row changes, the conflicts and
/// their decisions, warnings, and the fingerprint of every row the plan read.
///
/// The stored plan holds the full before-image of each row it changes (some hold token values or
/// password hashes): print `MergePlanView`, never the plan itself.
public struct MergePlan: Sendable, Codable {
    /// `mp_…`, derived from the fingerprint and the decisions; nil while a conflict is undecided
    /// (such a plan is shown, not stored, and cannot be applied).
    public let id: String?
    /// SHA-256 over the full contents of every row read.
    public let fingerprint: String
    /// The same, per group of rows (`U2's sessions`, ...), to say what changed when a plan is stale.
    public let groupHashes: [String: String]
    public let source: BetterAuthUserID
    public let target: BetterAuthUserID
    public let sourceEmail: String
    public let targetEmail: String
    public let decisions: MergeDecisions
    public let createdAt: Timestamp
    public let actor: String
    /// The row changes, in the order they run.
    public let steps: [MergeStep]
    public let conflicts: [MergeConflict]
    public let warnings: [String]
    /// Rows the plan read and leaves alone but relies on (U1's user row, U1's sync row).
    public let unchanged: [MergeRowImage]
    /// Row counts per person-referencing column, before and after.
    public let counts: [MergeCount]
    /// Every foreign key the merge follows (`workspaces.owner_id → users.id`).
    public let references: [String]
    /// The engine's record of what the plan's reads answered, opaque here (`ReadRecord`), where the engine keeps one
    /// (`SQLDatabase.recordingReads`): the apply offers it back (`SQLDatabase.offer`) so the engine may check the rows
    /// instead of reading them again. Absent elsewhere and when it would not fit `maxReadRecordBytes`.
    public var reads: ReadRecord? = nil
    /// How many plans of the same rows and decisions were applied and undone before this one (absent for none):
    /// part of the id, so that planning again after an undo gives a new plan rather than the spent one.
    public var round: Int? = nil

    /// The largest read record a stored plan keeps (D1 stores at most 2 MB in a row).
    public static let maxReadRecordBytes = 512 * 1024

    /// Conflicts still lacking a decision.
    public var unresolved: [MergeConflict] { conflicts.filter(\.isUnresolved) }
}
