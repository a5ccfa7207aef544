import Foundation
import Gatehouse

/// The CLI on the host is the break-glass path for two-person approval: a command whose action needs a second admin
/// in the console runs at once, and once it succeeded it is audited as `approval.bypassed` ("approval: bypassed
/// (cli)"), which `health` reports for 24 hours.
enum ApprovalBypass {
    /// The commands (by their words) that take each action.
    static let commands: [[String]: ApprovalAction] = [
        ["merge", "apply"]: .mergeApply,
        ["merge", "undo"]: .mergeUndo,
        ["users", "delete", "apply"]: .userDelete,
        ["policy", "set"]: .policySet,
        ["gates", "enable"]: .gateEnable,
        ["apple", "key", "revoke"]: .appleKeyRevoke,
        ["apple", "key", "activate"]: .appleKeyActivate,
        ["apple", "key", "rollback"]: .appleKeyActivate,
        ["admins", "add"]: .admins,
        ["admins", "passwd"]: .admins,
        ["admins", "disable"]: .admins,
        ["admins", "enable"]: .admins,
        ["admins", "remove"]: .admins,
        ["admins", "mfa", "reset"]: .admins,
    ]

    /// Records the bypass when `invocation` took an action the store requires approval for. A failure to record
    /// is said on stderr; the action itself has already happened and is audited on its own.
    static func record(_ invocation: Invocation) {
        guard let action = commands[invocation.path] else { return }
        do {
            let approvals = ApprovalStore(store: try invocation.openStore())
            guard try approvals.requires(action) else { return }
            try approvals.recordBypass(action, command: "gatehouse " + invocation.path.joined(separator: " "), actor: try invocation.actor, now: .now())
            invocation.output.error("gatehouse: \(action.rawValue) needs a second admin's approval in the console; run here, it was recorded as bypassed (approval: bypassed (cli)), and `gatehouse health` warns for 24 h")
        } catch {
            invocation.output.error("gatehouse: warning: the approval bypass could not be recorded: \(GatehouseError.operatorFacing(error)?.description ?? String(describing: error))")
        }
    }
}
