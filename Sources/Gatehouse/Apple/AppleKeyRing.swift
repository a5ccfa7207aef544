import Foundation
import JOSE
import Storage

/// The ring of Sign in with Apple keys (`gatehouse_apple_keys`): import a `.p8` (sealed at rest), activate
/// it after a self-test, roll back, record a revocation, list. Every change is audited; the key material is
/// never in a result, an error or an audit entry.
///
///     let ring = AppleKeyRing(store: store)
///     let imported = try ring.importKey(file: "AuthKey_ABCDEFGHIJ.p8", teamID: try TeamID("TEAM123456"), actor: actor, now: .now())
///     try ring.activate(imported.key.keyID, actor: actor, now: .now())
public struct AppleKeyRing {
    /// The store.
    public let store: Store
    private let suppliedMasterKey: MasterKey?

    /// Apple allows two keys per primary App ID: a third live key means one must be revoked first.
    public static let maxLiveKeys = 2
    /// A `.p8` is about 250 bytes; anything over this is not one.
    public static let maxFileSize = 64 * 1024

    /// A ring on `store`; the master key comes from `GATEHOUSE_MASTER_KEY` or `<store>.key` unless given.
    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.suppliedMasterKey = masterKey
    }

    /// The master key. When it is missing from a ring that already holds sealed keys, the error says to restore it:
    /// `init` would refuse to make a new one there, which could never open them.
    func masterKey() throws -> MasterKey {
        if let suppliedMasterKey { return suppliedMasterKey }
        do {
            return try MasterKey.load(storePath: store.path)
        } catch let error as GatehouseError where error.code == .notFound {
            try MasterKey.checkCustody(store.db, storePath: store.path)
            throw error
        }
    }

    // MARK: Reading

    /// Every key, newest import first.
    public func list() throws -> [AppleKey] {
        try store.db.rows("SELECT key_id, team_id, state, fingerprint, imported_at, activated_at, retired_at, revoked_at FROM gatehouse_apple_keys ORDER BY imported_at DESC, key_id")
            .map(Self.key)
    }

    /// The key with this id; `notFound` (with a did-you-mean) when there is none.
    public func key(_ id: KeyID) throws -> AppleKey {
        guard let key = try list().first(where: { $0.keyID == id }) else { throw try unknown(id) }
        return key
    }

    /// The active key, if any.
    public func activeKey() throws -> AppleKey? { try list().first { $0.state == .active } }

    /// The live keys of each team that has more than Apple allows. A ring holds the keys of two teams during an app
    /// transfer (each signs its own side), and Apple's limit is per team's App ID.
    static func crowded(_ keys: [AppleKey]) -> [[AppleKey]] {
        Dictionary(grouping: keys.filter(\.isLive), by: \.teamID).values.filter { $0.count > maxLiveKeys }
            .sorted { $0[0].teamID.rawValue < $1[0].teamID.rawValue }
    }

    /// Warnings about the ring as a whole: more live keys than Apple allows, no active key.
    public func warnings(_ keys: [AppleKey]) -> [AppleFinding] {
        var findings: [AppleFinding] = []
        for live in Self.crowded(keys) {
            findings.append(AppleFinding(.warning, "too_many_live_keys",
                "\(live.count) keys of team \(live[0].teamID) are live (\(live.map(\.keyID.rawValue).joined(separator: ", "))); Apple allows \(Self.maxLiveKeys) Sign in with Apple keys per primary App ID",
                fix: "revoke the oldest in Apple's portal, then record it: \(run: .appleKeyRevoke, "<KEYID>")"))
        }
        if !keys.isEmpty && !keys.contains(where: { $0.state == .active }) {
            findings.append(AppleFinding(.warning, "no_active_key", "no key is active: client secrets cannot be minted",
                                         fix: "\(run: .appleKeyActivate, "<KEYID>")"))
        }
        return findings
    }

    // MARK: Import

    /// What `importKey` did.
    public struct ImportResult: Sendable, Codable {
        public let key: AppleKey
        /// Warnings, such as a third live key or a Key ID that differs from the file name.
        public let warnings: [AppleFinding]
    }

    /// Reads, validates and seals a `.p8` as a `staged` key. The Key ID comes from `AuthKey_<KEYID>.p8` unless
    /// given; the Team ID from `teamID`, else the Apple provider configuration. Refuses (naming the file and what
    /// it holds) anything but an unencrypted PKCS#8 EC P-256 private key, and a key already in the ring.
    @discardableResult
    public func importKey(file path: String, keyID explicitKeyID: KeyID? = nil, teamID explicitTeamID: TeamID? = nil,
                          actor: Actor, now: Timestamp) throws -> ImportResult {
        let name = (path as NSString).lastPathComponent
        var warnings: [AppleFinding] = []
        let fromName = KeyID(fileName: path)
        guard let keyID = explicitKeyID ?? fromName else {
            throw GatehouseError.invalid("cannot tell the Key ID from the file name \(name): Apple names keys AuthKey_<KEYID>.p8",
                                         fix: "pass \(field: .keyID) <KEYID> (10 upper-case letters or digits, from Certificates, Identifiers & Profiles → Keys)")
        }
        if let fromName, fromName != keyID {
            warnings.append(AppleFinding(.warning, "key_id_differs_from_file_name",
                "\(field: .keyID) \(keyID) differs from the Key ID in the file name \(name) (\(fromName)); the client secret's kid will be \(keyID)",
                fix: "check which Key ID Apple shows for this key: a wrong kid makes Apple answer invalid_client"))
        }
        guard let teamID = try explicitTeamID ?? ProviderConfiguration(store: store).apple().teamID else {
            throw GatehouseError.invalid("no Team ID for \(name): pass \(field: .teamID), or configure it once with \(command: .providersSet, "apple", .option(.teamID, "<TEAMID>"))")
        }
        let pem = try Self.readKeyFile(path)
        let privateKey: P256.PrivateKey
        do {
            privateKey = try P256.PrivateKey(pemRepresentation: pem)
        } catch let error as KeyImportError {
            throw GatehouseError.invalid(error.description(naming: name), fix: nil)
        }
        let fingerprint = privateKey.publicKey.fingerprint
        let master = try masterKey()
        let sealed = try AESGCM.seal(Array(privateKey.pemRepresentation.utf8), key: master.bytes,
                                     associatedData: Self.associatedData(keyID: keyID, fingerprint: fingerprint))
        let key = AppleKey(keyID: keyID, teamID: teamID, state: .staged, fingerprint: fingerprint, importedAt: now,
                           activatedAt: nil, retiredAt: nil, revokedAt: nil)
        // A row with this fingerprint whose sealed key is not a usable key (a doctored file imported where keys'
        // scalars are not checked) is an impostor of the key being imported: it gives way to the genuine one.
        let impostor = try store.db.row("SELECT * FROM gatehouse_apple_keys WHERE fingerprint = ?", [fingerprint])
            .flatMap { row -> AppleKey? in try storedKeyIsUsable(row, master: master) == false ? Self.key(row) : nil }
        var details: [String: AuditValue] = ["key_id": .string(keyID.rawValue), "team_id": .string(teamID.rawValue),
                                             "fingerprint": .string(fingerprint), "file": .string(name)]
        if let impostor { details["replaced_unusable_key"] = .string("\(impostor.keyID.rawValue) (\(impostor.state.rawValue))") }
        try store.change(actor: actor, action: "apple.key.import", subject: keyID.rawValue, details: details) {
            if let impostor {
                try store.db.execute("DELETE FROM gatehouse_apple_keys WHERE key_id = ? AND fingerprint = ?", [impostor.keyID.rawValue, fingerprint])
            }
            if let existing = try store.db.row("SELECT key_id, state FROM gatehouse_apple_keys WHERE fingerprint = ?", [fingerprint]) {
                let revoked = existing["state"].string == AppleKey.State.revoked.rawValue
                throw GatehouseError.conflict("\(name) is already in the ring as key \(existing["key_id"].string ?? "?") (\(existing["state"].string ?? "?"), fingerprint \(fingerprint.prefix(16))…); nothing was imported",
                                              fix: revoked ? "a revoked key stays revoked: create a new key in Apple's portal and import that" : "nothing to do; \(command: .appleKeyList) shows it")
            }
            if let existing = try store.db.row("SELECT state, fingerprint FROM gatehouse_apple_keys WHERE key_id = ?", [keyID.rawValue]) {
                throw GatehouseError.conflict("the ring already holds a different key with Key ID \(keyID) (\(existing["state"].string ?? "?"), fingerprint \((existing["fingerprint"].string ?? "").prefix(16))…); \(name) has fingerprint \(fingerprint.prefix(16))…",
                                              fix: "check the Key ID: Apple never reuses one; pass \(field: .keyID) with this key's own id")
            }
            try store.db.execute("INSERT INTO gatehouse_apple_keys (key_id, team_id, state, fingerprint, sealed_p8, imported_at) VALUES (?, ?, 'staged', ?, ?, ?)",
                                 [keyID.rawValue, teamID.rawValue, fingerprint, sealed, now.iso8601])
        }
        for live in Self.crowded(try list()) where live[0].teamID == teamID {
            warnings.append(AppleFinding(.warning, "too_many_live_keys",
                "\(live.count) keys of team \(teamID) are now live (\(live.map(\.keyID.rawValue).joined(separator: ", "))): Apple allows \(Self.maxLiveKeys) per primary App ID, so it cannot have issued a third without one being revoked",
                fix: "revoke the oldest in Apple's portal, then record it: \(run: .appleKeyRevoke, "<KEYID>")"))
        }
        return ImportResult(key: key, warnings: warnings)
    }

    /// The text of a key file, refusing what cannot be one before parsing it.
    static func readKeyFile(_ path: String) throws -> String {
        let name = (path as NSString).lastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw GatehouseError.notFound("no key file at \(path)", fix: "check the path to the AuthKey_<KEYID>.p8 you downloaded")
        }
        guard !isDirectory.boolValue else { throw GatehouseError.invalid("\(path) is a folder, not a key file", fix: "pass the AuthKey_<KEYID>.p8 inside it") }
        try InputFile.requireRegular(path, what: "the key file")
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GatehouseError("\(name) is not readable by this user", fix: "check its permissions")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxFileSize + 1)) ?? Data()
        guard data.count <= maxFileSize else {
            throw GatehouseError.invalid("\(name) is over \(maxFileSize / 1024) KiB; an Apple .p8 key is about 250 bytes", fix: "check that this is the AuthKey_<KEYID>.p8 Apple issued")
        }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Lifecycle

    /// What a lifecycle change did.
    public struct Transition: Sendable, Codable {
        /// The key that is now active (or revoked, for `revoke`).
        public let key: AppleKey
        /// The key that was active before and is now retired, if any.
        public let retired: KeyID?
        /// The self-test run before activating.
        public let selfTest: SelfTest?
        /// False when nothing had to change (the key was already in that state).
        public let changed: Bool
        public let warnings: [AppleFinding]
    }

    /// Self-tests the key, then makes it active; the previously active key becomes retired. A revoked key is refused.
    @discardableResult
    public func activate(_ id: KeyID, actor: Actor, now: Timestamp) throws -> Transition {
        try activate(id, action: "apple.key.activate", actor: actor, now: now)
    }

    /// Re-activates the most recently retired key that is not revoked; the active key becomes retired.
    @discardableResult
    public func rollback(actor: Actor, now: Timestamp) throws -> Transition {
        let retired = try list().filter { $0.state == .retired }.sorted { ($0.retiredAt ?? $0.importedAt) > ($1.retiredAt ?? $1.importedAt) }
        guard let target = retired.first else {
            throw GatehouseError.notFound("no retired key to roll back to (a revoked key never comes back)",
                                          fix: "import and activate another key: \(run: .appleKeyImport, "AuthKey_<KEYID>.p8"), then activate it")
        }
        return try activate(target.keyID, action: "apple.key.rollback", actor: actor, now: now)
    }

    private func activate(_ id: KeyID, action: String, actor: Actor, now: Timestamp) throws -> Transition {
        let key = try self.key(id)
        if key.state == .revoked {
            throw GatehouseError.conflict("key \(id) was revoked at \(key.revokedAt?.iso8601 ?? "?") and can never be activated again",
                                          fix: "create a new key in Apple's portal, then \(run: .appleKeyImport, "AuthKey_<KEYID>.p8") and activate it")
        }
        if key.state == .active {
            return Transition(key: key, retired: nil, selfTest: nil, changed: false, warnings: [])
        }
        let test = try selfTest(id, now: now)
        guard test.passed else {
            throw GatehouseError("key \(id) failed its self-test, so it was not activated: \(test.checks.filter { $0.severity == .error }.map(\.message).joined(separator: "; "))",
                                 fix: "re-import the key from Apple's .p8", code: .selfTestFailed)
        }
        var retired: KeyID?
        try store.db.write {
            // Re-read inside the write lock: another process may have changed the ring since.
            guard let state = try store.db.row("SELECT state FROM gatehouse_apple_keys WHERE key_id = ?", [id.rawValue])?["state"].string,
                  state != AppleKey.State.revoked.rawValue else {
                throw GatehouseError.conflict("key \(id) was revoked or removed while it was being activated")
            }
            if let previous = try store.db.row("SELECT key_id FROM gatehouse_apple_keys WHERE state = 'active'")?["key_id"].string {
                retired = try KeyID(previous)
                try store.db.execute("UPDATE gatehouse_apple_keys SET state = 'retired', retired_at = ? WHERE key_id = ?", [now.iso8601, previous])
            }
            try store.db.execute("UPDATE gatehouse_apple_keys SET state = 'active', activated_at = ?, retired_at = NULL WHERE key_id = ?", [now.iso8601, id.rawValue])
            try store.audit.append(store.db, actor: actor, action: action, subject: id.rawValue, details: [
                "key_id": .string(id.rawValue), "fingerprint": .string(key.fingerprint), "from_state": .string(key.state.rawValue),
                "previous_active": retired.map { .string($0.rawValue) } ?? .null, "self_test": "passed",
            ], at: now)
        }
        let keys = try list()
        return Transition(key: keys.first { $0.keyID == id }!, retired: retired, selfTest: test, changed: true, warnings: warnings(keys))
    }

    /// Records that the key was revoked in Apple's portal. Final: it can never be activated again.
    /// Revoking the active key takes Sign in with Apple down until another is activated, so it needs
    /// `force` (Apple revoked it, or it leaked) — a mistyped id during a rotation must not be an outage.
    @discardableResult
    public func revoke(_ id: KeyID, force: Bool = false, actor: Actor, now: Timestamp) throws -> Transition {
        let key = try self.key(id)
        if key.state == .revoked { return Transition(key: key, retired: nil, selfTest: nil, changed: false, warnings: []) }
        if key.state == .active && !force {
            throw GatehouseError.conflict("\(id) is the active key: revoking it stops client secrets from working (Apple answers invalid_client)",
                                          fix: "activate the new key first (\(run: .appleKeyActivate, "<KEYID>")), then revoke \(id); if \(id) leaked or Apple already revoked it, pass \(field: .force)")
        }
        try store.change(actor: actor, action: "apple.key.revoke", subject: id.rawValue, details: [
            "key_id": .string(id.rawValue), "fingerprint": .string(key.fingerprint), "from_state": .string(key.state.rawValue),
        ]) {
            try store.db.execute("UPDATE gatehouse_apple_keys SET state = 'revoked', revoked_at = ? WHERE key_id = ?", [now.iso8601, id.rawValue])
        }
        let keys = try list()
        var warnings = self.warnings(keys)
        if key.state == .active {
            warnings.insert(AppleFinding(.warning, "active_key_revoked",
                "\(id) was the active key: client secrets minted from it are now rejected by Apple (invalid_client)",
                fix: "\(run: .appleKeyRollback), or activate another key, and redeploy"), at: 0)
        }
        return Transition(key: keys.first { $0.keyID == id }!, retired: nil, selfTest: nil, changed: true, warnings: warnings)
    }

    // MARK: Self-test

    /// The outcome of a self-test: open the sealed key, check its fingerprint, mint a client secret and verify it
    /// with the derived public key.
    public struct SelfTest: Sendable, Codable {
        public let keyID: KeyID
        public let fingerprint: String
        public let checks: [AppleFinding]
        public var passed: Bool { !checks.contains { $0.severity == .error } }
    }

    /// Self-tests `id`, or the active key when nil.
    public func selfTest(_ id: KeyID? = nil, now: Timestamp) throws -> SelfTest {
        let key: AppleKey
        if let id { key = try self.key(id) } else {
            guard let active = try activeKey() else {
                throw GatehouseError.notFound("no key is active", fix: "name a key: \(run: .appleKeySelftest, "<KEYID>")")
            }
            key = active
        }
        var checks: [AppleFinding] = []
        let privateKey: P256.PrivateKey
        do {
            privateKey = try self.privateKey(key)
            checks.append(AppleFinding(.ok, "unsealed", "the sealed key opened with the master key"))
        } catch let error as GatehouseError {
            return SelfTest(keyID: key.keyID, fingerprint: key.fingerprint, checks: [AppleFinding(.error, "unseal_failed", error.message, fix: error.fix)])
        }
        if privateKey.publicKey.fingerprint == key.fingerprint {
            checks.append(AppleFinding(.ok, "fingerprint", "the key's public fingerprint matches the ring's record"))
        } else {
            checks.append(AppleFinding(.error, "fingerprint_mismatch", "the unsealed key's fingerprint does not match the ring's record"))
        }
        do {
            let minter = ClientSecretMinter(keyID: key.keyID, teamID: key.teamID, privateKey: privateKey)
            let token = try minter.mint(clientID: "gatehouse.selftest", lifetime: Seconds(60), now: now)
            let compact = try JWT.verify(token, key: privateKey.publicKey)
            guard compact.signature.count == 64, compact.keyID == key.keyID.rawValue,
                  compact.payload["iss"]?.stringValue == key.teamID.rawValue else {
                throw JWTError.invalidSignature
            }
            checks.append(AppleFinding(.ok, "mint_verify", "a client secret minted with the key (ES256, 64-byte r‖s signature) verifies with its public key"))
        } catch {
            checks.append(AppleFinding(.error, "mint_verify_failed", "a client secret minted with the key does not verify: \(error)"))
        }
        return SelfTest(keyID: key.keyID, fingerprint: key.fingerprint, checks: checks)
    }

    // MARK: Key material (module-internal)

    /// Opens a key's sealed `.p8`. Internal: only minting, the self-test and `AppleExport` see key material.
    func privateKey(_ key: AppleKey) throws -> P256.PrivateKey {
        let master = try masterKey()
        guard let sealed = try store.db.row("SELECT sealed_p8 FROM gatehouse_apple_keys WHERE key_id = ?", [key.keyID.rawValue])
            .map({ try $0.blob("sealed_p8") }) else { throw try unknown(key.keyID) }
        let pem: [UInt8]
        do {
            pem = try AESGCM.open(sealed, key: master.bytes, associatedData: Self.associatedData(keyID: key.keyID, fingerprint: key.fingerprint))
        } catch {
            throw GatehouseError("cannot open the sealed key \(key.keyID): the master key from \(master.source) is not the one it was sealed with, or the row was altered",
                                 fix: "use the master key the store was created with (GATEHOUSE_MASTER_KEY or \(MasterKey.defaultPath(forStore: store.path)))",
                                 code: .unsealFailed)
        }
        do { return try P256.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self)) } catch {
            throw GatehouseError("the sealed key \(key.keyID) opened but does not hold a P-256 key", code: .unsealFailed)
        }
    }

    /// Whether a stored row's sealed key opens into a usable P-256 key: nil when it cannot be opened with this
    /// master key (another key sealed it: no verdict on the key itself), false when it opens but is not a valid key.
    func storedKeyIsUsable(_ row: Row, master: MasterKey) throws -> Bool? {
        let stored = try Self.key(row)
        guard let sealed = try? row.blob("sealed_p8"),
              let pem = try? AESGCM.open(sealed, key: master.bytes, associatedData: Self.associatedData(keyID: stored.keyID, fingerprint: stored.fingerprint))
        else { return nil }
        return (try? P256.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))) != nil
    }

    /// The active key and its private key, ready to mint.
    func activeSigningKey() throws -> (AppleKey, P256.PrivateKey) {
        guard let key = try activeKey() else {
            let keys = try list()
            throw GatehouseError.notFound(keys.isEmpty ? "the key ring is empty: no key to mint with" : "no key is active: no key to mint with",
                                          fix: keys.isEmpty ? "\(run: .appleKeyImport, "AuthKey_<KEYID>.p8", .option(.teamID, "<TEAMID>")), then activate it" : "\(run: .appleKeyActivate, "<KEYID>")")
        }
        return (key, try privateKey(key))
    }

    static func associatedData(keyID: KeyID, fingerprint: String) -> [UInt8] {
        Array("gatehouse_apple_keys:\(keyID.rawValue):\(fingerprint)".utf8)
    }

    private func unknown(_ id: KeyID) throws -> GatehouseError {
        let ids = try list().map(\.keyID.rawValue)
        let hint = Suggestion.closest(to: id.rawValue, among: ids).map { " (did you mean \($0)?)" } ?? ""
        return GatehouseError.notFound("no key \(id) in the ring\(hint)",
                                       fix: ids.isEmpty ? "the ring is empty: \(run: .appleKeyImport, "AuthKey_<KEYID>.p8")" : "keys in the ring: \(ids.joined(separator: ", "))")
    }

    static func key(_ row: Row) throws -> AppleKey {
        func time(_ column: String) -> Timestamp? { row[column].string.flatMap(Timestamp.init(iso8601:)) }
        return AppleKey(keyID: try KeyID(try row.string("key_id")), teamID: try TeamID(try row.string("team_id")),
                        state: AppleKey.State(rawValue: try row.string("state")) ?? .revoked, fingerprint: try row.string("fingerprint"),
                        importedAt: time("imported_at") ?? Timestamp(milliseconds: 0), activatedAt: time("activated_at"),
                        retiredAt: time("retired_at"), revokedAt: time("revoked_at"))
    }
}
