import JOSE
import Storage

/// Client secrets against the store: mint from the active key, track a secret deployed as a static value,
/// list the tracked ones. The token itself is never stored or audited; only its SHA-256.
public struct ClientSecretService {
    /// The store.
    public let store: Store
    let ring: AppleKeyRing

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.ring = AppleKeyRing(store: store, masterKey: masterKey)
    }

    /// A minted secret and what it says.
    public struct Minted: Sendable, Codable {
        /// The JWT. Deploy it; it is not kept.
        public let token: String
        public let keyID: KeyID
        public let teamID: TeamID
        public let clientID: String
        public let issuedAt: Timestamp
        public let expiresAt: Timestamp
        /// Hex SHA-256 of the token.
        public let fingerprint: String
    }

    /// Mints from the active key. `clientID` defaults to the configured Services ID. The mint is audited
    /// (key, client id, expiry, fingerprint), never the token.
    public func mint(clientID explicitClientID: String? = nil, lifetime: Seconds = ClientSecretMinter.defaultLifetime,
                     actor: Actor, now: Timestamp) throws -> Minted {
        try ClientSecretMinter.checkLifetime(lifetime)
        let clientID: String
        if let explicitClientID {
            guard let checked = try ProviderConfiguration.identifier(explicitClientID, option: "\(field: .clientID)", kind: "client id", empty: false) else { throw GatehouseError.invalid("empty \(field: .clientID)") }
            clientID = checked
        } else {
            guard let services = try ProviderConfiguration(store: store).apple().servicesID else {
                throw GatehouseError.invalid("no client id: pass \(field: .clientID), or configure the Services ID with \(command: .providersSet, "apple", .option(.servicesID, "<id>"))")
            }
            clientID = services
        }
        let (key, privateKey) = try ring.activeSigningKey()
        let token = try ClientSecretMinter(keyID: key.keyID, teamID: key.teamID, privateKey: privateKey)
            .mint(clientID: clientID, lifetime: lifetime, now: now)
        let issued = Timestamp(seconds: now.seconds)
        let minted = Minted(token: token, keyID: key.keyID, teamID: key.teamID, clientID: clientID, issuedAt: issued,
                            expiresAt: issued.adding(seconds: lifetime.value), fingerprint: SHA256.hex(token))
        _ = try store.audit.append(store.db, actor: actor, action: "apple.secret.mint", subject: key.keyID.rawValue, details: [
            "key_id": .string(key.keyID.rawValue), "client_id": .string(clientID), "expires_at": .string(minted.expiresAt.iso8601),
            "lifetime_seconds": .int(lifetime.value), "fingerprint": .string(minted.fingerprint),
        ], at: now)
        return minted
    }

    /// A client secret deployed as a static value, watched for expiry.
    public struct Tracked: Sendable, Codable, Equatable {
        public let id: Int64
        public let keyID: String
        public let teamID: String
        public let clientID: String
        public let issuedAt: Timestamp
        public let expiresAt: Timestamp
        /// Hex SHA-256 of the token.
        public let fingerprint: String
        public let trackedAt: Timestamp
        public let trackedBy: String
    }

    /// What `track` did: the record and the inspection of the token.
    public struct TrackResult: Sendable, Codable {
        public let tracked: Tracked
        public let inspection: ClientSecretInspection
    }

    /// Registers a deployed secret: its expiry and fingerprint are stored, never the token. Refuses a token that
    /// is not a client secret at all (undecodable, no `kid`, `iss`, `sub`, `iat` or `exp`) and one already tracked;
    /// faults that do not stop tracking (expired, unknown key) come back in the inspection.
    public func track(_ token: String, actor: Actor, now: Timestamp) throws -> TrackResult {
        let inspection = try ClientSecretInspector(store: store, masterKey: nil, ring: ring).inspect(token, now: now)
        guard let claims = inspection.claims, let kid = claims.keyID, let iss = claims.issuer, let sub = claims.subject,
              let iat = claims.issuedAt, let exp = claims.expiresAt else {
            let missing = inspection.findings.filter { $0.severity == .error }.map(\.message).first ?? "it is not a client secret"
            throw GatehouseError.invalid("cannot track this token: \(missing)", fix: "pass the client secret exactly as deployed (header.payload.signature)")
        }
        let fingerprint = SHA256.hex(token.trimmingCharacters(in: .whitespacesAndNewlines))
        let id: Int64 = try store.change(actor: actor, action: "apple.secret.track", subject: kid, details: [
            "key_id": .string(kid), "client_id": .string(sub), "expires_at": .string(Timestamp(seconds: exp).iso8601),
            "fingerprint": .string(fingerprint),
        ]) {
            if try store.db.row("SELECT id FROM gatehouse_tracked_secrets WHERE fingerprint = ?", [fingerprint]) != nil {
                throw GatehouseError.conflict("this client secret is already tracked (fingerprint \(fingerprint.prefix(16))…)", fix: "nothing to do; \(command: .appleSecretInspect) shows its expiry")
            }
            let id = try store.db.nextID(in: "gatehouse_tracked_secrets")
            try store.db.execute("""
                INSERT INTO gatehouse_tracked_secrets (id, kind, key_id, team_id, client_id, issued_at, expires_at, fingerprint, tracked_at, tracked_by)
                VALUES (?, 'apple_client_secret', ?, ?, ?, ?, ?, ?, ?, ?)
                """, [id, kid, iss, sub, Timestamp(seconds: iat).iso8601, Timestamp(seconds: exp).iso8601, fingerprint, now.iso8601, actor.name])
            return id
        }
        return TrackResult(tracked: try tracked().first { $0.id == id }!, inspection: inspection)
    }

    /// Stops watching a deployed secret (replaced, or the runtime now mints per request). `fingerprint` is the
    /// SHA-256 `apple secret list` shows, or a prefix of at least 8 characters naming exactly one secret.
    @discardableResult
    public func untrack(fingerprint prefix: String, actor: Actor, now: Timestamp) throws -> Tracked {
        let wanted = prefix.lowercased()
        guard wanted.count >= 8, wanted.count <= 64, wanted.allSatisfy({ $0.isHexDigit }) else {
            throw GatehouseError.invalid("\"\(prefix.prefix(70))\" is not a secret's fingerprint", fix: "give 8 to 64 hex characters of the FINGERPRINT column of \(command: .appleSecretList)")
        }
        let matches = try tracked().filter { $0.fingerprint.hasPrefix(wanted) }
        guard let secret = matches.first else {
            throw GatehouseError.notFound("no tracked secret has a fingerprint starting \(wanted)", fix: "see \(command: .appleSecretList)")
        }
        guard matches.count == 1 else {
            throw GatehouseError.invalid("\(matches.count) tracked secrets have fingerprints starting \(wanted)", fix: "give more characters of the fingerprint")
        }
        try store.change(actor: actor, action: "apple.secret.untrack", subject: secret.keyID, details: [
            "key_id": .string(secret.keyID), "client_id": .string(secret.clientID), "fingerprint": .string(secret.fingerprint),
            "expires_at": .string(secret.expiresAt.iso8601),
        ]) {
            try store.db.execute("DELETE FROM gatehouse_tracked_secrets WHERE id = ?", [secret.id])
        }
        return secret
    }

    /// Every tracked secret, soonest expiry first.
    public func tracked() throws -> [Tracked] {
        try store.db.rows("SELECT * FROM gatehouse_tracked_secrets ORDER BY expires_at, id").map { row in
            func time(_ column: String) throws -> Timestamp { Timestamp(iso8601: try row.string(column)) ?? Timestamp(milliseconds: 0) }
            return Tracked(id: row["id"].int64 ?? 0, keyID: try row.string("key_id"), teamID: try row.string("team_id"),
                           clientID: try row.string("client_id"), issuedAt: try time("issued_at"), expiresAt: try time("expires_at"),
                           fingerprint: try row.string("fingerprint"), trackedAt: try time("tracked_at"), trackedBy: try row.string("tracked_by"))
        }
    }
}
