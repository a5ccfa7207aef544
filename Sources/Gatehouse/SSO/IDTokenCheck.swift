import JOSE
import Storage

/// The checks of OpenID Connect Core 1.0 §3.1.3.7 on an ID token from the token endpoint: signed RS256 or ES256 by a
/// key of the provider's set, `iss` exactly the configured issuer, `aud` holding the client id (and `azp` the client id
/// when there are several audiences, or whenever it is present), `exp` not past and `iat` not ahead (60 s of clock skew
/// either way), and the `nonce` this sign-in sent. Each failure is its own `SSOError` reason.
struct IDTokenCheck {
    let issuer: String
    let clientID: String
    let nonce: String
    let now: Timestamp
    /// Seconds of clock difference allowed between the provider and the console.
    static let skew: Int64 = 60

    /// The token's claims once every check passes. `key` finds the provider's key for a key id.
    func claims(of token: String, key: (String?) throws -> JWK) throws -> [String: JSONValue] {
        let compact: JWT.Compact
        do { compact = try JWT.Compact(parsing: token) } catch { throw SSOError(.idTokenMalformed) }
        guard compact.algorithm == "RS256" || compact.algorithm == "ES256" else {
            throw SSOError(.idTokenSignature, "the ID token is signed with \(String(compact.algorithm.prefix(16))); only RS256 and ES256 are accepted")
        }
        let signingKey = try key(compact.keyID)
        do { try compact.verify(with: signingKey) } catch { throw SSOError(.idTokenSignature) }
        let claims = compact.payload
        guard claims["iss"]?.stringValue == issuer else { throw SSOError(.idTokenIssuer) }
        let audiences: [String]
        if let single = claims["aud"]?.stringValue {
            audiences = [single]
        } else if let list = claims["aud"]?.arrayValue {
            audiences = list.compactMap(\.stringValue)
        } else {
            throw SSOError(.idTokenAudience, "the ID token names no audience")
        }
        guard audiences.contains(clientID) else { throw SSOError(.idTokenAudience) }
        if audiences.count > 1 || claims["azp"] != nil {
            guard claims["azp"]?.stringValue == clientID else {
                throw SSOError(.idTokenAudience, "the ID token has several audiences and its authorized party (azp) is not this client")
            }
        }
        let seconds = now.milliseconds / 1000
        guard let exp = claims["exp"]?.int64Value, let iat = claims["iat"]?.int64Value else {
            throw SSOError(.idTokenMalformed, "the ID token lacks exp or iat")
        }
        guard seconds <= exp + Self.skew, iat <= seconds + Self.skew else { throw SSOError(.idTokenExpired) }
        guard let sent = claims["nonce"]?.stringValue, sent.utf8.count == nonce.utf8.count,
              SHA256.hash(Array(sent.utf8)) == SHA256.hash(Array(nonce.utf8)) else { throw SSOError(.idTokenNonce) }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.count <= 255 else {
            throw SSOError(.idTokenMalformed, "the ID token has no usable sub")
        }
        return claims
    }
}
