import Foundation
import JOSE
import Storage

/// The console admins' second factors (`gatehouse_admin_factors`, `gatehouse_recovery_codes`): enrol and confirm
/// TOTP, verify a code, list, rename and remove factors, regenerate recovery codes, the break-glass reset, and the
/// store-wide requirement. Every change is one write transaction with its audit entry; a TOTP secret is sealed at
/// rest under the master key as the Apple keys are, and is in a result only once, at enrolment; recovery codes are
/// stored as their SHA-256 and shown only when made.
///
/// WebAuthn credentials are stored here too (`addWebAuthnCredential`); checking an assertion goes through the
/// `webauthn` seam (`WebAuthnAssertionVerifier`), and the signature counter is judged here.
///
///     let factors = SecondFactors(store: store)
///     let enrolment = try factors.enrolTOTP(admin, actor: admin.consoleActor, now: .now())
///     let recoveryCodes = try factors.confirmTOTP(admin, code: "123456", actor: admin.consoleActor, now: .now())
///     let ok = try factors.verify(admin, method: .totp, answer: "654321", challenge: nil, now: .now())
public struct SecondFactors {
    /// The store.
    public let store: Store
    private let suppliedMasterKey: MasterKey?
    /// Checks WebAuthn assertions; nil: passkeys are stored but not offered.
    public var webauthn: (any WebAuthnAssertionVerifier)?

    /// The issuer an authenticator app shows beside the account.
    public static let issuer = "Gatehouse"
    /// Recovery codes made at a time.
    public static let recoveryCodeCount = 10
    /// The longest factor name.
    public static let maxNameLength = 64

    public init(store: Store, masterKey: MasterKey? = nil, webauthn: (any WebAuthnAssertionVerifier)? = nil) {
        self.store = store
        self.suppliedMasterKey = masterKey
        self.webauthn = webauthn
    }

    // MARK: Reading

    /// The admin's factors, pending ones included, oldest first.
    public func factors(of admin: Admin) throws -> [AdminFactor] {
        try store.db.rows("SELECT id, kind, name, created_at, confirmed_at, last_used_at, credential_id FROM gatehouse_admin_factors WHERE admin_id = ? ORDER BY created_at, id",
                          [admin.id]).map(AdminFactor.init(row:))
    }

    /// Whether the admin has a confirmed factor (then the login asks for it, and step-up applies).
    public func hasFactor(_ admin: Admin) throws -> Bool {
        try store.db.scalar("SELECT count(*) FROM gatehouse_admin_factors WHERE admin_id = ? AND confirmed_at IS NOT NULL", [admin.id]).int64 ?? 0 > 0
    }

    /// The ways the admin can prove a factor now: passkeys (when a verifier is plugged in), TOTP, unused recovery codes.
    public func methods(of admin: Admin) throws -> [SecondFactorMethod] {
        let kinds = Set(try store.db.rows("SELECT DISTINCT kind FROM gatehouse_admin_factors WHERE admin_id = ? AND confirmed_at IS NOT NULL",
                                          [admin.id]).compactMap { $0["kind"].string.flatMap(FactorKind.init(rawValue:)) })
        guard !kinds.isEmpty else { return [] }
        var methods: [SecondFactorMethod] = []
        if kinds.contains(.webauthn) && webauthn != nil { methods.append(.webauthn) }
        if kinds.contains(.totp) { methods.append(.totp) }
        if try recoveryCodesLeft(admin) > 0 { methods.append(.recovery) }
        return methods
    }

    /// Unused recovery codes.
    public func recoveryCodesLeft(_ admin: Admin) throws -> Int {
        Int(try store.db.scalar("SELECT count(*) FROM gatehouse_recovery_codes WHERE admin_id = ? AND used_at IS NULL", [admin.id]).int64 ?? 0)
    }

    /// Every admin with their factors, for `admins list --json`.
    public func listing() throws -> [AdminWithFactors] {
        try AdminDirectory(store: store).list().map { admin in
            AdminWithFactors(admin: admin, factors: try factors(of: admin), recoveryCodesLeft: try recoveryCodesLeft(admin))
        }
    }

    /// Whether the store requires every admin to have a factor (`admins mfa require on`).
    public func isRequired() throws -> Bool {
        try store.db.scalar("SELECT value FROM gatehouse_console_settings WHERE name = 'mfa_required'").string == "on"
    }

    /// The stored WebAuthn credentials of an admin (for `allowCredentials` and verification).
    public func webAuthnCredentials(of admin: Admin) throws -> [WebAuthnCredential] {
        try store.db.rows("""
            SELECT f.id, f.credential_id, f.public_key, f.sign_count, a.webauthn_user_handle
            FROM gatehouse_admin_factors f JOIN gatehouse_admins a ON a.id = f.admin_id
            WHERE f.admin_id = ? AND f.kind = 'webauthn' AND f.confirmed_at IS NOT NULL ORDER BY f.created_at, f.id
            """, [admin.id]).map(Self.credential)
    }

    /// The admin's WebAuthn user handle (`user.id` of a passkey's creation options): 32 random bytes, made on first
    /// use and kept, so every passkey of the admin carries the same handle and none carries the username.
    public func webAuthnUserHandle(of admin: Admin) throws -> [UInt8] {
        let select = "SELECT webauthn_user_handle FROM gatehouse_admins WHERE id = ?"
        if let kept = try store.db.scalar(select, [admin.id]).string, let bytes = Base64URL.decode(kept) { return bytes }
        let made = Base64URL.encode(try SecureRandom.bytes(32))
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_admins SET webauthn_user_handle = ? WHERE id = ? AND webauthn_user_handle IS NULL", [made, admin.id])
        }
        // Of two first registrations at once, one handle is kept: read back whichever it is.
        guard let kept = try store.db.scalar(select, [admin.id]).string, let bytes = Base64URL.decode(kept) else {
            throw GatehouseError("\(admin.username)'s passkey user handle was stored but cannot be read back")
        }
        return bytes
    }

    // MARK: TOTP enrolment

    /// Makes a new TOTP secret for the admin, pending until `confirmTOTP` sees a code from it; a pending factor made
    /// earlier is replaced. The secret is in the result this once.
    public func enrolTOTP(_ admin: Admin, name: String? = nil, actor: Actor, now: Timestamp) throws -> TOTPEnrolment {
        let label = try Self.factorName(name ?? "Authenticator app")
        let secret = try SecureRandom.bytes(TOTP.secretLength)
        let id = try SecureRandom.alphanumeric(22)
        let sealed = try AESGCM.seal(secret, key: try masterKey().bytes, associatedData: Self.associatedData(id: id, adminID: admin.id))
        try store.db.write {
            try store.db.execute("DELETE FROM gatehouse_admin_factors WHERE admin_id = ? AND kind = 'totp' AND confirmed_at IS NULL", [admin.id])
            try store.db.execute("INSERT INTO gatehouse_admin_factors (id, admin_id, kind, name, sealed_secret, created_at) VALUES (?, ?, 'totp', ?, ?, ?)",
                                 [id, admin.id, label, sealed, now.iso8601])
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.totp.enrol", subject: admin.username,
                                   details: ["factor": .string(id), "name": .string(label)], at: now)
        }
        return TOTPEnrolment(id: id, secret: Base32.encode(secret),
                             otpauthUri: TOTP.uri(secret: secret, issuer: Self.issuer, account: admin.username))
    }

    /// Confirms the admin's pending TOTP factor with a code from it, and makes a new set of recovery codes (any
    /// earlier set stops working). Returns the codes: shown this once. A wrong code is `invalid` and changes nothing.
    public func confirmTOTP(_ admin: Admin, code: String, actor: Actor, now: Timestamp) throws -> [String] {
        let master = try masterKey()
        let codes = try (0..<Self.recoveryCodeCount).map { _ in try Self.newRecoveryCode() }
        try store.db.write {
            guard let row = try store.db.row("SELECT id, sealed_secret FROM gatehouse_admin_factors WHERE admin_id = ? AND kind = 'totp' AND confirmed_at IS NULL",
                                             [admin.id]) else {
                throw GatehouseError.notFound("\(admin.username) has no TOTP factor waiting for confirmation", fix: "enrol one first")
            }
            let id = try row.string("id")
            let secret = try open(row, id: id, adminID: admin.id, master: master)
            guard let step = TOTP(secret: secret).match(code, at: now, after: nil) else {
                throw GatehouseError.invalid("the code does not match the new authenticator's", fix: "type the code the app shows now (6 digits)")
            }
            try store.db.execute("UPDATE gatehouse_admin_factors SET confirmed_at = ?, last_step = ?, last_used_at = ? WHERE id = ?",
                                 [now.iso8601, step, now.iso8601, id])
            try replaceRecoveryCodes(of: admin, with: codes, now: now)
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.totp.confirm", subject: admin.username,
                                   details: ["factor": .string(id), "recovery_codes": .int(Int64(codes.count))], at: now)
        }
        return codes
    }

    // MARK: Verifying

    /// Whether `answer` proves the admin's factor by `method`: a TOTP code within ±1 step not accepted before, an
    /// unused recovery code, or a WebAuthn assertion for `challenge`. What it accepts is used up in the same write
    /// (the TOTP step, the recovery code, the signature counter). False for a wrong answer; throws only for a
    /// failure to check (no master key, the store), or a passkey whose counter went backwards (audited).
    public func verify(_ admin: Admin, method: SecondFactorMethod, answer: String, challenge: String?, now: Timestamp) throws -> Bool {
        switch method {
        case .totp: return try verifyTOTP(admin, code: answer, now: now)
        case .recovery: return try useRecoveryCode(admin, code: answer, now: now)
        case .webauthn: return try verifyWebAuthn(admin, assertion: answer, challenge: challenge, now: now)
        }
    }

    private func verifyTOTP(_ admin: Admin, code: String, now: Timestamp) throws -> Bool {
        let master = try masterKey()
        return try store.db.write {
            let rows = try store.db.rows("SELECT id, sealed_secret, last_step FROM gatehouse_admin_factors WHERE admin_id = ? AND kind = 'totp' AND confirmed_at IS NOT NULL",
                                         [admin.id])
            for row in rows {
                let id = try row.string("id")
                let secret = try open(row, id: id, adminID: admin.id, master: master)
                guard let step = TOTP(secret: secret).match(code, at: now, after: row["last_step"].int64) else { continue }
                try store.db.execute("UPDATE gatehouse_admin_factors SET last_step = ?, last_used_at = ? WHERE id = ?", [step, now.iso8601, id])
                return true
            }
            return false
        }
    }

    private func useRecoveryCode(_ admin: Admin, code: String, now: Timestamp) throws -> Bool {
        guard let hash = Self.recoveryCodeHash(code) else { return false }
        return try store.db.write {
            guard let row = try store.db.row("SELECT used_at FROM gatehouse_recovery_codes WHERE code_hash = ? AND admin_id = ?", [hash, admin.id]),
                  row["used_at"].string == nil else { return false }
            try store.db.execute("UPDATE gatehouse_recovery_codes SET used_at = ? WHERE code_hash = ?", [now.iso8601, hash])
            try store.audit.append(store.db, actor: admin.consoleActor, action: "admin.mfa.recovery_code.use", subject: admin.username, at: now)
            return true
        }
    }

    private func verifyWebAuthn(_ admin: Admin, assertion: String, challenge: String?, now: Timestamp) throws -> Bool {
        guard let webauthn, let challenge, let credentialID = try? webauthn.credentialID(of: assertion) else { return false }
        guard let row = try store.db.row("""
            SELECT f.id, f.credential_id, f.public_key, f.sign_count, a.webauthn_user_handle
            FROM gatehouse_admin_factors f JOIN gatehouse_admins a ON a.id = f.admin_id
            WHERE f.admin_id = ? AND f.kind = 'webauthn' AND f.credential_id = ? AND f.confirmed_at IS NOT NULL
            """, [admin.id, credentialID]) else { return false }
        let credential = try Self.credential(row)
        guard let counter = try? webauthn.verify(assertion: assertion, challenge: challenge, credential: credential) else { return false }
        return try recordAssertion(admin, credential: credential, counter: counter, now: now)
    }

    /// Records a verified assertion's signature counter. WebAuthn §6.1.1: a counter that is not zero and does not
    /// grow past the stored one means two authenticators hold the key (a clone): refused, and audited.
    public func recordAssertion(_ admin: Admin, credential: WebAuthnCredential, counter: UInt32, now: Timestamp) throws -> Bool {
        try store.db.write {
            if (counter != 0 || credential.signCount != 0) && counter <= credential.signCount {
                try store.audit.append(store.db, actor: admin.consoleActor, action: "admin.mfa.webauthn.counter_refused", subject: admin.username,
                                       details: ["factor": .string(credential.factorID), "stored": .int(Int64(credential.signCount)),
                                                 "presented": .int(Int64(counter))], at: now)
                return false
            }
            try store.db.execute("UPDATE gatehouse_admin_factors SET sign_count = ?, last_used_at = ? WHERE id = ?",
                                 [Int64(counter), now.iso8601, credential.factorID])
            return true
        }
    }

    // MARK: WebAuthn registration (verified by the caller)

    /// Stores a WebAuthn credential whose registration the caller has verified (WebAuthn §7.1), confirmed at once.
    /// A credential id already registered (to anyone) is a conflict. Makes recovery codes when the admin had none.
    public func addWebAuthnCredential(_ admin: Admin, name: String, credentialID: String, publicKey: [UInt8], signCount: UInt32,
                                      actor: Actor, now: Timestamp) throws -> (factor: AdminFactor, recoveryCodes: [String]?) {
        let label = try Self.factorName(name)
        let id = try SecureRandom.alphanumeric(22)
        let codes = try (0..<Self.recoveryCodeCount).map { _ in try Self.newRecoveryCode() }
        let made: Bool = try store.db.write {
            if try store.db.row("SELECT 1 FROM gatehouse_admin_factors WHERE credential_id = ?", [credentialID]) != nil {
                throw GatehouseError.conflict("this passkey is already registered", fix: "use another authenticator, or remove the registered one first")
            }
            let needsCodes = try store.db.scalar("SELECT count(*) FROM gatehouse_recovery_codes WHERE admin_id = ? AND used_at IS NULL", [admin.id]).int64 ?? 0 == 0
            try store.db.execute("""
                INSERT INTO gatehouse_admin_factors (id, admin_id, kind, name, credential_id, public_key, sign_count, created_at, confirmed_at)
                VALUES (?, ?, 'webauthn', ?, ?, ?, ?, ?, ?)
                """, [id, admin.id, label, credentialID, publicKey, Int64(signCount), now.iso8601, now.iso8601])
            if needsCodes { try replaceRecoveryCodes(of: admin, with: codes, now: now) }
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.webauthn.register", subject: admin.username,
                                   details: ["factor": .string(id), "name": .string(label)], at: now)
            return needsCodes
        }
        guard let factor = try factors(of: admin).first(where: { $0.id == id }) else {
            throw GatehouseError("the passkey was stored but cannot be read back")
        }
        return (factor, made ? codes : nil)
    }

    /// Audits a refused passkey registration (`admin.mfa.webauthn.register.failed`) with the verification step that
    /// refused it (a WebAuthn §7.1 step, the challenge, or a credential id already registered).
    public func recordRefusedRegistration(_ admin: Admin, step: String, actor: Actor, now: Timestamp) throws {
        _ = try store.db.write {
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.webauthn.register.failed", subject: admin.username,
                                   details: ["step": .string(step)], at: now)
        }
    }

    // MARK: Managing

    /// Renames one of the admin's factors.
    @discardableResult
    public func rename(_ admin: Admin, factor id: String, to name: String, actor: Actor, now: Timestamp) throws -> AdminFactor {
        let label = try Self.factorName(name)
        try store.db.write {
            try requireFactor(admin, id)
            try store.db.execute("UPDATE gatehouse_admin_factors SET name = ? WHERE id = ? AND admin_id = ?", [label, id, admin.id])
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.rename", subject: admin.username,
                                   details: ["factor": .string(id), "name": .string(label)], at: now)
        }
        guard let factor = try factors(of: admin).first(where: { $0.id == id }) else { throw unknownFactor() }
        return factor
    }

    /// Removes one of the admin's factors; with the last confirmed one go the recovery codes.
    public func remove(_ admin: Admin, factor id: String, actor: Actor, now: Timestamp) throws {
        try store.db.write {
            let kind = try requireFactor(admin, id)
            let left = try store.db.scalar("SELECT count(*) FROM gatehouse_admin_factors WHERE admin_id = ? AND confirmed_at IS NOT NULL AND id != ?",
                                           [admin.id, id]).int64 ?? 0
            try store.db.execute("DELETE FROM gatehouse_admin_factors WHERE id = ? AND admin_id = ?", [id, admin.id])
            if left == 0 { try store.db.execute("DELETE FROM gatehouse_recovery_codes WHERE admin_id = ?", [admin.id]) }
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.remove", subject: admin.username,
                                   details: ["factor": .string(id), "kind": .string(kind.rawValue), "factors_left": .int(left)], at: now)
        }
    }

    /// A new set of recovery codes for an admin with a factor; the old set stops working. Shown this once.
    public func regenerateRecoveryCodes(_ admin: Admin, actor: Actor, now: Timestamp) throws -> [String] {
        let codes = try (0..<Self.recoveryCodeCount).map { _ in try Self.newRecoveryCode() }
        try store.db.write {
            guard try hasFactor(admin) else {
                throw GatehouseError.conflict("\(admin.username) has no second factor; recovery codes come with the first one", fix: "enrol a factor first")
            }
            try replaceRecoveryCodes(of: admin, with: codes, now: now)
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.recovery_codes", subject: admin.username,
                                   details: ["recovery_codes": .int(Int64(codes.count))], at: now)
        }
        return codes
    }

    /// Break-glass, on the host: removes every factor and recovery code of the admin (a lost device) and ends their
    /// sessions. Audited as `admin.mfa.reset` with the reason.
    public func reset(_ username: AdminUsername, reason: String, actor: Actor, now: Timestamp) throws -> SecondFactorReset {
        let why = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !why.isEmpty else { throw GatehouseError.invalid("\(field: .reason) is empty", fix: "say why the factors are removed (a lost device, a ticket)") }
        let directory = AdminDirectory(store: store)
        return try store.db.write {
            guard let admin = try directory.find(username) else {
                throw GatehouseError.notFound("no admin named \(username)", fix: "list them with \(command: .adminsList)")
            }
            let counts = try store.db.snapshot([
                SQLStatement("SELECT count(*) AS n FROM gatehouse_admin_factors WHERE admin_id = ?", [admin.id]),
                SQLStatement("SELECT count(*) AS n FROM gatehouse_recovery_codes WHERE admin_id = ? AND used_at IS NULL", [admin.id]),
            ]).map { Int($0.first?["n"].int64 ?? 0) }
            try store.db.execute("DELETE FROM gatehouse_admin_factors WHERE admin_id = ?", [admin.id])
            try store.db.execute("DELETE FROM gatehouse_recovery_codes WHERE admin_id = ?", [admin.id])
            try store.db.execute("DELETE FROM gatehouse_mfa_challenges WHERE admin_id = ?", [admin.id])
            let ended = try directory.revokeSessions(of: admin, now: now)
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.reset", subject: admin.username,
                                   details: ["reason": .string(why), "break_glass": .bool(true), "factors": .int(Int64(counts[0])),
                                             "recovery_codes": .int(Int64(counts[1])), "sessions_ended": .int(Int64(ended))], at: now)
            return SecondFactorReset(username: admin.username, factorsRemoved: counts[0], recoveryCodesRemoved: counts[1], sessionsEnded: ended)
        }
    }

    /// Turns the store-wide requirement on or off; returns whether it changed.
    @discardableResult
    public func setRequired(_ required: Bool, actor: Actor, now: Timestamp) throws -> Bool {
        try store.db.write {
            let before = try isRequired()
            try store.db.execute("""
                INSERT INTO gatehouse_console_settings (name, value, updated_at, updated_by) VALUES ('mfa_required', ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """, [required ? "on" : "off", now.iso8601, actor.name])
            let without = try store.db.scalar("""
                SELECT count(*) FROM gatehouse_admins a WHERE a.disabled = 0
                AND NOT EXISTS (SELECT 1 FROM gatehouse_admin_factors f WHERE f.admin_id = a.id AND f.confirmed_at IS NOT NULL)
                """).int64 ?? 0
            try store.audit.append(store.db, actor: actor, action: "admin.mfa.require", subject: required ? "on" : "off",
                                   details: ["changed": .bool(before != required), "admins_without_factor": .int(without)], at: now)
            return before != required
        }
    }

    // MARK: Internals

    /// The master key, as `AppleKeyRing` loads it.
    func masterKey() throws -> MasterKey {
        if let suppliedMasterKey { return suppliedMasterKey }
        return try MasterKey.load(storePath: store.path)
    }

    static func associatedData(id: String, adminID: Int64) -> [UInt8] {
        Array("gatehouse_admin_factors:\(id):\(adminID)".utf8)
    }

    private func open(_ row: Row, id: String, adminID: Int64, master: MasterKey) throws -> [UInt8] {
        do {
            return try AESGCM.open(try row.blob("sealed_secret"), key: master.bytes, associatedData: Self.associatedData(id: id, adminID: adminID))
        } catch {
            throw GatehouseError("cannot open a sealed TOTP secret: the master key from \(master.source) is not the one it was sealed with, or the row was altered",
                                 fix: "restore the master key the store was sealed with, or reset the admin's factors with \(command: .adminsMfaReset)",
                                 code: .unsealFailed)
        }
    }

    @discardableResult
    private func requireFactor(_ admin: Admin, _ id: String) throws -> FactorKind {
        guard let kind = try store.db.scalar("SELECT kind FROM gatehouse_admin_factors WHERE id = ? AND admin_id = ?", [id, admin.id]).string
            .flatMap(FactorKind.init(rawValue:)) else { throw unknownFactor() }
        return kind
    }

    private func unknownFactor() -> GatehouseError {
        GatehouseError.notFound("no such factor of yours", fix: "list your factors and use one of their ids")
    }

    private func replaceRecoveryCodes(of admin: Admin, with codes: [String], now: Timestamp) throws {
        try store.db.execute("DELETE FROM gatehouse_recovery_codes WHERE admin_id = ?", [admin.id])
        for code in codes {
            guard let hash = Self.recoveryCodeHash(code) else { continue }
            try store.db.execute("INSERT INTO gatehouse_recovery_codes (code_hash, admin_id, created_at) VALUES (?, ?, ?)", [hash, admin.id, now.iso8601])
        }
    }

    /// The name a factor is listed under: 1–64 characters, no control characters.
    public static func factorName(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= maxNameLength, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GatehouseError.invalid("a factor's name is 1 to \(maxNameLength) characters without control characters")
        }
        return name
    }

    /// The recovery code alphabet: lower-case letters and digits without the look-alikes 0, 1, l, o.
    static let recoveryAlphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")

    /// `xxxx-xxxx-xxxx-xxxx`: 16 characters of 32, 80 random bits.
    static func newRecoveryCode() throws -> String {
        let characters = try SecureRandom.bytes(16).map { recoveryAlphabet[Int($0 & 31)] }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// The stored hash of a recovery code as typed (case, spaces and dashes ignored), or nil when it cannot be one.
    static func recoveryCodeHash(_ typed: String) -> String? {
        let plain = String(typed.lowercased().filter { $0 != "-" && !$0.isWhitespace })
        guard plain.count == 16, plain.allSatisfy({ recoveryAlphabet.contains($0) }) else { return nil }
        return SHA256.hex(plain)
    }

    static func credential(_ row: Row) throws -> WebAuthnCredential {
        WebAuthnCredential(factorID: try row.string("id"), credentialID: try row.string("credential_id"), publicKey: try row.blob("public_key"),
                           signCount: UInt32(clamping: row["sign_count"].int64 ?? 0), userHandle: row["webauthn_user_handle"].string)
    }
}
