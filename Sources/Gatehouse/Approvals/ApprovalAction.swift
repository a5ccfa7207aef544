/// An action that may need a second admin's approval in the console (`gatehouse approvals require`): the writes that
/// cannot be taken back in practice. In the console a required one is recorded as a request and runs only when another
/// admin approves it; on the host the CLI runs it at once and records the bypass (`ApprovalBypass`).
public enum ApprovalAction: String, Sendable, Codable, CaseIterable, Comparable {
    case mergeApply = "merge.apply"
    case mergeUndo = "merge.undo"
    case userDelete = "user.delete"
    case policySet = "policy.set"
    case gateEnable = "gate.enable"
    case appleKeyRevoke = "apple.key.revoke"
    case appleKeyActivate = "apple.key.activate"
    case admins = "admins"

    public static func < (lhs: ApprovalAction, rhs: ApprovalAction) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// What the action does, in a reviewer's words.
    public var summary: String {
        switch self {
        case .mergeApply: return "apply a merge of two users"
        case .mergeUndo: return "undo a merge"
        case .userDelete: return "delete a user"
        case .policySet: return "change the linking policy"
        case .gateEnable: return "turn a provider on for a platform"
        case .appleKeyRevoke: return "revoke an Apple signing key"
        case .appleKeyActivate: return "make another Apple key the active one"
        case .admins: return "add, change or remove a console admin"
        }
    }

    /// The action `name` names, or an error listing the names.
    public static func named(_ name: String) throws -> ApprovalAction {
        guard let action = ApprovalAction(rawValue: name) else {
            throw GatehouseError.invalid("\"\(OperatorText.visible(String(name.prefix(40)), keepLineBreaks: false))\" is not an action that can need approval",
                                         fix: "name one or more of: \(allCases.map(\.rawValue).joined(separator: " ")), or none")
        }
        return action
    }
}
