import Foundation
import JOSE
import Storage

/// Single-use WebAuthn challenges (`gatehouse_mfa_challenges`) for a step-up or a passkey's registration: 32 random
/// bytes (base64url), bound to the admin and the purpose, good for 5 minutes, used once. The login's own challenge
/// travels with its mfaToken (`TokenService.signIn`).
///
///     let challenge = try MFAChallenges(store: store).issue(.register, for: admin, now: .now())
///     // … the browser signs it; the verifier checks the signature over it …
///     guard try MFAChallenges(store: store).consume(.register, challenge, for: admin, now: .now()) else { throw … }
public struct MFAChallenges {
    /// What a challenge is for.
    public enum Purpose: String, Sendable {
        case stepUp = "step_up"
        case register
    }

    public let store: Store
    /// How long a challenge may wait: 5 minutes.
    public static let lifetime: Int64 = 300

    public init(store: Store) { self.store = store }

    /// A new challenge for `admin`, base64url.
    public func issue(_ purpose: Purpose, for admin: Admin, now: Timestamp) throws -> String {
        let challenge = Base64URL.encode(try SecureRandom.bytes(32))
        try store.db.write {
            try store.db.execute("DELETE FROM gatehouse_mfa_challenges WHERE expires_at < ?", [now.adding(seconds: -86_400).iso8601])
            try store.db.execute("INSERT INTO gatehouse_mfa_challenges (token_hash, purpose, admin_id, challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                                 [SHA256.hex(challenge), purpose.rawValue, admin.id, challenge, now.iso8601, now.adding(seconds: Self.lifetime).iso8601])
        }
        return challenge
    }

    /// Whether `challenge` was issued to `admin` for `purpose`, is unused and unexpired; if so it is used up now.
    public func consume(_ purpose: Purpose, _ challenge: String, for admin: Admin, now: Timestamp) throws -> Bool {
        let hash = SHA256.hex(challenge)
        return try store.db.write {
            guard let row = try store.db.row("SELECT expires_at, used_at FROM gatehouse_mfa_challenges WHERE token_hash = ? AND purpose = ? AND admin_id = ? AND challenge = ?",
                                             [hash, purpose.rawValue, admin.id, challenge]),
                  row["used_at"].string == nil,
                  let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { return false }
            try store.db.execute("UPDATE gatehouse_mfa_challenges SET used_at = ? WHERE token_hash = ?", [now.iso8601, hash])
            return true
        }
    }
}
