import JOSE

/// Mints Apple client secrets: ES256 JWTs with header `alg` ES256 and `kid` the Key ID, claims `iss` the Team ID,
/// `iat`, `exp`, `aud` `https://appleid.apple.com` and `sub` the client id (the Services ID for the web flow).
///
///     let minter = ClientSecretMinter(keyID: keyID, teamID: teamID, privateKey: key)
///     let secret = try minter.mint(clientID: "com.example.web", lifetime: ClientSecretMinter.defaultLifetime, now: .now())
public struct ClientSecretMinter: Sendable {
    /// The `aud` Apple requires.
    public static let audience = "https://appleid.apple.com"
    /// Apple's cap on a client secret's lifetime (`exp` − `iat`), about six months. Apple answers `invalid_client`
    /// to anything longer.
    public static let maxLifetimeSeconds: Int64 = 15_777_000
    /// The cap as a duration.
    public static let maxLifetime = Seconds(maxLifetimeSeconds)
    /// The default lifetime: short, because the runtime can mint per request.
    public static let defaultLifetime = Seconds(3600)

    public let keyID: KeyID
    public let teamID: TeamID
    let privateKey: P256.PrivateKey
    private let header: [String: JSONValue]

    public init(keyID: KeyID, teamID: TeamID, privateKey: P256.PrivateKey) {
        self.keyID = keyID
        self.teamID = teamID
        self.privateKey = privateKey
        self.header = ["kid": .string(keyID.rawValue)]
    }

    /// Refuses a lifetime of zero or over Apple's cap, naming the cap.
    public static func checkLifetime(_ lifetime: Seconds) throws {
        guard lifetime.value > 0 else {
            throw GatehouseError.invalid("a client secret's lifetime must be positive, got \(lifetime)", fix: "pass \(field: .ttl) 1h (the default) or up to \(maxLifetimeSeconds) s")
        }
        guard lifetime.value <= maxLifetimeSeconds else {
            throw GatehouseError.invalid("a lifetime of \(lifetime.value) s (\(lifetime)) is over Apple's cap of 15,777,000 s (about 182 days); Apple answers invalid_client to such a secret",
                                         fix: "pass \(field: .ttl) \(maxLifetimeSeconds) or less; better, mint short-lived secrets (1h) in the runtime")
        }
    }

    /// A client secret for `clientID`, valid from `now` for `lifetime`.
    public func mint(clientID: String, lifetime: Seconds, now: Timestamp) throws -> String {
        try Self.checkLifetime(lifetime)
        let iat = now.seconds
        return try JWT.sign(header: header, claims: [
            "iss": .string(teamID.rawValue), "iat": .integer(iat), "exp": .integer(iat + lifetime.value),
            "aud": .string(Self.audience), "sub": .string(clientID),
        ], key: privateKey)
    }
}
