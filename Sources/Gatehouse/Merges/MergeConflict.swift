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

extension MergeConflict {
    /// The email conflict, worded by how Better Auth compares the two emails: JavaScript's `toLowerCase()`, then
    /// code units (`JavaScriptString.sameEmail`), never Swift's canonical `==`. Emails that differ only by Unicode
    /// normalisation (`é` composed and decomposed) are two emails to Better Auth, and the message says so.
    static func email(target: String, source: String, relayRequired: Bool, decision: String?) -> MergeConflict {
        let message: String
        if relayRequired {
            message = "U1's email \(target) is a private relay; U2's \(source) is real"
        } else if JavaScriptString.sameEmail(target, source) {
            message = "U1's email \(target) and U2's \(source) are the same email to Better Auth (toLowerCase, then ===)"
        } else if JavaScriptString.differOnlyByNormalisation(target, source) {
            message = "U1's email \(target) and U2's \(source) look the same but differ in Unicode normalisation: Better Auth (which compares code units) takes them for two emails, and sign-in finds a user only by the exact one kept"
        } else {
            message = "U1's email is \(target); U2's is \(source)"
        }
        return MergeConflict(kind: "email", message: message, decision: decision, option: "--keep-email target|source")
    }
}
