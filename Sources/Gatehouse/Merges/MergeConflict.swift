/// Something the two users both have, where the merge must be told which one wins.
public struct MergeConflict: Sendable, Equatable, Codable {
    /// What collides. Each kind is settled by one field of `MergeDecisions`.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case email, subscription, password, provider, role

        /// The decision that settles this kind of conflict.
        public var field: MergeDecisions.Field {
            switch self {
            case .email: return .keepEmail
            case .subscription: return .keepSubscription
            case .password: return .keepPassword
            case .provider: return .sameProvider
            case .role: return .carryRoles
            }
        }
    }

    /// What collides.
    public let kind: Kind
    /// The collision, in words.
    public let message: String
    /// The decision taken, in words; nil while undecided.
    public let decision: String?
    /// The decision field that settles it (`keepEmail`), which each front end spells its own way (`--keep-email`).
    public var field: MergeDecisions.Field { kind.field }

    public init(kind: Kind, message: String, decision: String?) {
        self.kind = kind
        self.message = message
        self.decision = decision
    }

    /// Whether the plan still needs a decision for this conflict.
    public var isUnresolved: Bool { decision == nil }

    private enum CodingKeys: String, CodingKey { case kind, message, decision, field }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        message = try container.decode(String.self, forKey: .message)
        decision = try container.decodeIfPresent(String.self, forKey: .decision)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(decision, forKey: .decision)
        try container.encode(field, forKey: .field)
    }
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
        return MergeConflict(kind: .email, message: message, decision: decision)
    }
}
