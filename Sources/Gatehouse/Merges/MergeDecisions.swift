/// The choices an operator makes for a merge's conflicts. Each conflict the planner finds needs its
/// decision before the plan can be applied: nothing is decided silently.
public struct MergeDecisions: Sendable, Equatable, Codable {
    /// Which user's value wins.
    public enum Side: String, Sendable, Codable, CaseIterable {
        /// U1, the user merged into.
        case target
        /// U2, the user merged away.
        case source
    }

    /// When both users have an account of the same provider.
    public enum SameProvider: String, Sendable, Codable, CaseIterable {
        /// Keep both accounts on U1: either one signs in.
        case both
        /// Keep U1's account, delete U2's.
        case target
        /// Keep U2's account (moved to U1), delete U1's.
        case source
    }

    /// Which email U1 ends with (`--keep-email`); required when U1's is a relay and U2's is real.
    public var keepEmail: Side?
    /// Which live subscription stays live (`--keep-subscription`); required when both have one.
    public var keepSubscription: Side?
    /// Which password hash U1 keeps (`--keep-password`); required when both have a credential account.
    public var keepPassword: Side?
    /// What to do with two accounts of one provider (`--same-provider`); required when it happens.
    public var sameProvider: SameProvider?
    /// Grant U1 the allow-list roles only U2 had (`--carry-roles`); otherwise they are dropped.
    public var carryRoles: Bool

    public init(keepEmail: Side? = nil, keepSubscription: Side? = nil, keepPassword: Side? = nil,
                sameProvider: SameProvider? = nil, carryRoles: Bool = false) {
        self.keepEmail = keepEmail
        self.keepSubscription = keepSubscription
        self.keepPassword = keepPassword
        self.sameProvider = sameProvider
        self.carryRoles = carryRoles
    }

    /// A decision, by the name each front end spells its own way (`keepEmail` in a console request, `--keep-email` on
    /// the command line).
    public enum Field: String, Sendable, Codable, CaseIterable {
        case keepEmail, keepSubscription, keepPassword, sameProvider, carryRoles

        /// The input that carries it, which each front end spells its own way (`--keep-email`, `"keepEmail"`).
        public var input: InputField {
            switch self {
            case .keepEmail: return .keepEmail
            case .keepSubscription: return .keepSubscription
            case .keepPassword: return .keepPassword
            case .sameProvider: return .sameProvider
            case .carryRoles: return .carryRoles
            }
        }

        /// The values it takes, in the order they are offered.
        public var values: [String] {
            switch self {
            case .keepEmail, .keepSubscription, .keepPassword: return Side.allCases.map(\.rawValue)
            case .sameProvider: return SameProvider.allCases.map(\.rawValue)
            case .carryRoles: return ["true", "false"]
            }
        }

        /// The value `decisions` holds for it, nil while undecided.
        public func chosen(in decisions: MergeDecisions) -> String? {
            switch self {
            case .keepEmail: return decisions.keepEmail?.rawValue
            case .keepSubscription: return decisions.keepSubscription?.rawValue
            case .keepPassword: return decisions.keepPassword?.rawValue
            case .sameProvider: return decisions.sameProvider?.rawValue
            case .carryRoles: return String(decisions.carryRoles)
            }
        }
    }

    /// A canonical text form, part of the plan id.
    var canonical: String {
        "email=\(keepEmail?.rawValue ?? "-");subscription=\(keepSubscription?.rawValue ?? "-");password=\(keepPassword?.rawValue ?? "-");"
            + "provider=\(sameProvider?.rawValue ?? "-");roles=\(carryRoles)"
    }
}
