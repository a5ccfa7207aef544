import Foundation

/// What revoking one account's Apple tokens came to, as the revocation step reports it. Never holds a token.
public struct DeletionRevocationOutcome: Sendable, Codable, Equatable {
    /// The `account` row's id.
    public let accountID: String
    /// `revoked`, `no_token` (nothing to revoke: TN3194's other steps apply) or `failed`.
    public let status: String
    /// One line for the operator.
    public let detail: String

    public init(accountID: String, status: String, detail: String) {
        self.accountID = accountID
        self.status = status
        self.detail = detail
    }

    /// Whether this outcome lets the deletion go ahead.
    public var allowsDeletion: Bool { status != "failed" }
}

/// The step `users delete apply` runs before deleting anything: revoke the user's Apple tokens (Guideline
/// 5.1.1(v), TN3194). Injected, so that the deletion does not depend on how revocation is done: the Apple lifecycle
/// work provides `AppleTokenRevoker(store:baseURL:now:).revoke(userID:dryRun:)`, which a small adapter turns into
/// one of these; tests pass a fake that records its calls.
///
///     let revocation = DeletionRevocation { userID in try revoker.revoke(userID: userID, dryRun: false).map(…) }
public struct DeletionRevocation: Sendable {
    /// Revokes every Apple token the store holds for the user; throws (or reports `failed`) when one could not be.
    public let revoke: @Sendable (BetterAuthUserID) throws -> [DeletionRevocationOutcome]

    public init(_ revoke: @escaping @Sendable (BetterAuthUserID) throws -> [DeletionRevocationOutcome]) { self.revoke = revoke }

    /// The step the CLI and the console use for `store`: the one place that wires revocation in, an adapter over
    /// `AppleTokenRevoker` (Apple at `GATEHOUSE_APPLE_BASE_URL`, else appleid.apple.com). An account whose token
    /// Apple would not revoke (`invalid_client`, a timeout, no Apple client configured…) is `failed`, which stops
    /// the deletion before anything is deleted; the operator fixes the cause or chooses `--no-revoke` with a reason.
    public static func standard(store: Store, actor: Actor) -> DeletionRevocation {
        // The step runs on the caller's thread, on the store it was made for, before the deletion's transaction.
        nonisolated(unsafe) let store = store
        return DeletionRevocation { userID in
            var revoker = AppleTokenRevoker(store: store, baseURL: nil, now: .now())
            revoker.actor = actor
            return try revoker.revoke(userID: userID.rawValue, dryRun: false).map { outcome in
                let status = outcome.outcome == .noToken ? "no_token" : outcome.outcome == .revoked ? "revoked" : "failed"
                return DeletionRevocationOutcome(accountID: outcome.accountID, status: status, detail: outcome.message)
            }
        }
    }

    /// The step in a build without token revocation: it refuses, so a deletion never skips revocation silently.
    public static let unavailable = DeletionRevocation { _ in
        throw GatehouseError("token revocation is not available in this build",
                             fix: "pass \(field: .noRevoke) with \(field: .reason) to delete without revoking (say why, e.g. the tokens were revoked by hand), or use a build that revokes Apple tokens",
                             code: .invalid)
    }
}

/// Whether a deletion revokes Apple tokens first, or is told not to (with the operator's reason, audited).
public enum DeletionRevocationChoice: Sendable {
    case revoke(DeletionRevocation)
    case skip(reason: String)
}
