import Gatehouse

/// `POST /api/users/:id/deletion/plan`: {ticket}.
struct UserDeletionPlanRequest: Decodable, Sendable {
    let ticket: String
}

/// `POST /api/deletions/:planId/apply`: {confirmEmail, noRevoke?, reason?, retain?}.
///
/// `confirmEmail` is the user's email as the operator typed it: it must be the user's current email (compared as
/// Better Auth stores it, lowercased), so a deletion is never one click. `noRevoke` needs a `reason`.
struct UserDeletionApplyRequest: Decodable, Sendable {
    let confirmEmail: String
    let noRevoke: Bool?
    let reason: String?
    let retain: DurationInput?

    /// The revocation choice this request makes for `store`.
    func revocation(store: Store, actor: Actor) throws -> DeletionRevocationChoice {
        if noRevoke ?? false {
            guard let reason, !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw APIError.badRequest("\"noRevoke\" needs a \"reason\": say why the Apple tokens are not revoked")
            }
            return .skip(reason: reason)
        }
        guard reason == nil || reason?.isEmpty == true else { throw APIError.badRequest("\"reason\" goes with \"noRevoke\": true") }
        return .revoke(.standard(store: store, actor: actor))
    }
}

/// `POST /api/deletions/:id/undo`: {reason}.
struct UserDeletionUndoRequest: Decodable, Sendable {
    let reason: String
}

/// What `POST /api/users/:id/deletion/plan` answers: the plan as `users delete plan --json` prints it, and the user's
/// current email, which the page asks the operator to type to confirm.
struct UserDeletionPlanResponse: Encodable, Sendable {
    let plan: UserDeletionPlan
    let email: String
}
