import Foundation
import Gatehouse

/// The CLI on the host is the break-glass path for two-person approval: a command whose action needs a second admin
/// in the console runs at once, and once it succeeded it is audited as `approval.bypassed` ("approval: bypassed
/// (cli)"), which `health` reports for 24 hours. Whether the action needs approval is read with the command's own
/// opening of the store (`ApprovalWatch`), so a command that bypasses nothing pays nothing.
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

    /// Runs `invocation`'s command, watching the stores it opens when it takes an approval action, and records the
    /// bypass when it succeeded on a store that requires approval for that action.
    static func run(_ invocation: Invocation) throws -> Int32 {
        guard let action = commands[invocation.path] else { return try invocation.spec.run?(invocation) ?? 0 }
        let watch = ApprovalWatch(action: action)
        let status = try ApprovalWatch.$current.withValue(watch) { try invocation.spec.run?(invocation) ?? 0 }
        let (required, store) = watch.required
        guard status == 0, required, let store else { return status }
        do {
            try ApprovalStore(store: store).recordBypass(action, command: "gatehouse " + invocation.path.joined(separator: " "),
                                                         actor: try invocation.actor, now: .now())
            invocation.output.error("gatehouse: \(action.rawValue) needs a second admin's approval in the console; run here, it was recorded as bypassed (approval: bypassed (cli)), and `gatehouse health` warns for 24 h")
        } catch {
            invocation.output.error("gatehouse: warning: the approval bypass could not be recorded: \(GatehouseError.operatorFacing(error)?.description ?? String(describing: error))")
        }
        return status
    }
}
