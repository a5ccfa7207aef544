/// Something the two users both have, where the merge must be told which one wins.
public struct MergeConflict: Sendable, Equatable, Codable {
    /// What collides: `email`, `password`, `provider`, `subscription`, `role`.
    public let kind: String
    /// The collision, in words.
    public let message: String
    /// The decision taken, in words; nil while undecided.
    public let decision: String?
    /// The option that decides it (`--keep-email target|source`).
    public let option: String

    /// Whether the plan still needs a decision for this conflict.
    public var isUnresolved: Bool { decision == nil }
}
