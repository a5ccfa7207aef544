import Storage

/// The console's admins: add, list, change a password, disable, enable, remove, and check a password.
/// Every change is one write transaction with its audit entry (never the password or its hash).
/// Disabling an admin, changing their password or removing them ends their console sessions.
///
///     let admins = AdminDirectory(store: store)
///     let (password, text) = try AdminPassword.generate()
///     try admins.add(try AdminUsername("alice"), role: .support, password: password, actor: Actor("ops-bob"), now: .now())
public struct AdminDirectory {
    /// The store.
    public let store: Store
    /// Hashes new passwords and checks presented ones.
    public let hasher: PasswordHasher

    public init(store: Store, hasher: PasswordHasher = .standard) {
        self.store = store
        self.hasher = hasher
    }

    // MARK: Reading

    /// Every admin, by username.
    public func list() throws -> [Admin] {
        try store.db.rows("SELECT \(Admin.columns) FROM gatehouse_admins ORDER BY username").map(Admin.init(row:))
    }

    /// The admin with this username, if any.
    public func find(_ username: AdminUsername) throws -> Admin? {
        try store.db.row("SELECT \(Admin.columns) FROM gatehouse_admins WHERE username = ?",
                         [username.rawValue]).map(Admin.init(row:))
    }

    /// How many admins exist (disabled ones included).
    public func count() throws -> Int {
        Int(try store.db.scalar("SELECT count(*) FROM gatehouse_admins").int64 ?? 0)
    }

    /// The enabled admin whose password this is, or nil. Takes the same time whether or not the
    /// username exists, so a login cannot probe for usernames.
    public func verify(username: String, password: AdminPassword) throws -> (Admin?, LoginRefusal?) {
        guard AdminUsername.isValid(username) else {
            hasher.verifyNothing(password)
            return (nil, .unknownUser)
        }
        let row = try store.db.row("SELECT \(Admin.columns), password_hash FROM gatehouse_admins WHERE username = ?", [username])
        guard let row, let stored = row["password_hash"].string else {
            hasher.verifyNothing(password)
            return (nil, .unknownUser)
        }
        let admin = try Admin(row: row)
        // An SSO admin has no password: the check takes a real one's time, so a login cannot tell them apart.
        guard admin.source == .local else {
            hasher.verifyNothing(password)
            return (nil, .wrongPassword)
        }
        guard hasher.verify(password, against: stored) else { return (nil, .wrongPassword) }
        guard !admin.disabled else { return (nil, .disabled) }
        return (admin, nil)
    }

    // MARK: Writing

    /// Adds an admin.
    @discardableResult
    public func add(_ username: AdminUsername, role: AdminRole, password: AdminPassword, actor: Actor, now: Timestamp) throws -> Admin {
        let hash = try hasher.hash(password)
        try write {
            if try store.db.row("SELECT 1 FROM gatehouse_admins WHERE username = ?", [username.rawValue]) != nil {
                throw GatehouseError.conflict("an admin named \(username) already exists",
                                              fix: "pick another name, or change their password with \(command: .adminsPasswd, "\(username)")")
            }
            try store.db.execute("INSERT INTO gatehouse_admins (username, password_hash, role, disabled, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)",
                                 [username.rawValue, hash, role.rawValue, now.iso8601, now.iso8601])
            try store.audit.append(store.db, actor: actor, action: "admin.add", subject: username.rawValue, details: ["role": .string(role.rawValue)], at: now)
        }
        // Read back once written: a store that sends a write's statements together (D1) cannot answer a read of the
        // rows the same write adds.
        return try require(username)
    }

    /// Sets a new password and ends the admin's console sessions.
    public func setPassword(_ username: AdminUsername, password: AdminPassword, actor: Actor, now: Timestamp) throws {
        let hash = try hasher.hash(password)
        try write {
            let admin = try require(username)
            guard admin.source == .local else {
                throw GatehouseError.conflict("\(username) signs in through single sign-on and has no password here",
                                              fix: "their provider decides who they are; disable them with \(command: .adminsDisable, "\(username)") if needed")
            }
            try store.db.execute("UPDATE gatehouse_admins SET password_hash = ?, updated_at = ? WHERE id = ?", [hash, now.iso8601, admin.id])
            let ended = try revokeSessions(of: admin, now: now)
            // A new password also lifts this account's login throttle.
            try store.db.execute("DELETE FROM gatehouse_login_failures WHERE scope = ?", [LoginThrottle.accountScope(username.rawValue, store: store)])
            try store.audit.append(store.db, actor: actor, action: "admin.passwd", subject: username.rawValue,
                                   details: ["sessions_ended": .int(Int64(ended))], at: now)
        }
    }

    /// Disables an admin (they can no longer log in) and ends their sessions. Refuses to disable the
    /// last enabled admin with the `admin` role.
    @discardableResult
    public func disable(_ username: AdminUsername, actor: Actor, now: Timestamp) throws -> Admin {
        try write {
            let admin = try require(username)
            guard !admin.disabled else { return }
            try refuseLosingLastAdmin(admin, doing: "disable")
            try store.db.execute("UPDATE gatehouse_admins SET disabled = 1, updated_at = ? WHERE id = ?", [now.iso8601, admin.id])
            let ended = try revokeSessions(of: admin, now: now)
            try store.audit.append(store.db, actor: actor, action: "admin.disable", subject: username.rawValue,
                                   details: ["sessions_ended": .int(Int64(ended))], at: now)
        }
        // Read back once written, as `add` does: D1 cannot answer a read of the rows the same write changes.
        return try require(username)
    }

    /// Enables a disabled admin.
    @discardableResult
    public func enable(_ username: AdminUsername, actor: Actor, now: Timestamp) throws -> Admin {
        try write {
            let admin = try require(username)
            guard admin.disabled else { return }
            try store.db.execute("UPDATE gatehouse_admins SET disabled = 0, updated_at = ? WHERE id = ?", [now.iso8601, admin.id])
            try store.audit.append(store.db, actor: actor, action: "admin.enable", subject: username.rawValue, at: now)
        }
        return try require(username)
    }

    /// Removes an admin and their tokens. Refuses to remove the last enabled admin with the `admin` role.
    public func remove(_ username: AdminUsername, actor: Actor, now: Timestamp) throws {
        try write {
            let admin = try require(username)
            try refuseLosingLastAdmin(admin, doing: "remove")
            try store.db.execute("DELETE FROM gatehouse_tokens WHERE admin_id = ?", [admin.id])
            for table in ["gatehouse_admin_factors", "gatehouse_recovery_codes", "gatehouse_mfa_challenges"] {
                try store.db.execute("DELETE FROM \(table) WHERE admin_id = ?", [admin.id])
            }
            try store.db.execute("DELETE FROM gatehouse_admins WHERE id = ?", [admin.id])
            try store.audit.append(store.db, actor: actor, action: "admin.remove", subject: username.rawValue,
                                   details: ["role": .string(admin.role.rawValue)], at: now)
        }
    }

    // MARK: Helpers

    private func write<T>(_ body: () throws -> T) throws -> T {
        try store.db.write(body)
    }

    private func require(_ username: AdminUsername) throws -> Admin {
        guard let admin = try find(username) else {
            throw GatehouseError.notFound("no admin named \(username)", fix: "list them with \(command: .adminsList)")
        }
        return admin
    }

    private func refuseLosingLastAdmin(_ admin: Admin, doing verb: String) throws {
        guard admin.role == .admin, !admin.disabled else { return }
        let others = try store.db.scalar("SELECT count(*) FROM gatehouse_admins WHERE role = 'admin' AND disabled = 0 AND id != ?", [admin.id]).int64 ?? 0
        guard others > 0 else {
            throw GatehouseError.conflict("\(admin.username) is the only enabled admin with the admin role; refusing to \(verb) them",
                                          fix: "add another admin first: \(run: .adminsAdd, "NAME", .option(.role, "admin"))")
        }
    }

    /// Revokes every token family of `admin`; returns how many families were live.
    func revokeSessions(of admin: Admin, now: Timestamp) throws -> Int {
        let live = try store.db.scalar("SELECT count(DISTINCT family_id) FROM gatehouse_tokens WHERE admin_id = ? AND revoked_at IS NULL", [admin.id]).int64 ?? 0
        try store.db.execute("UPDATE gatehouse_tokens SET revoked_at = ? WHERE admin_id = ? AND revoked_at IS NULL", [now.iso8601, admin.id])
        return Int(live)
    }
}

/// Why a login was refused, for the audit log only: the client always hears "invalid credentials".
public enum LoginRefusal: String, Sendable, Codable {
    case unknownUser = "unknown_user"
    case wrongPassword = "wrong_password"
    case disabled
    case throttled
    /// A wrong second factor after a right password.
    case wrongFactor = "wrong_factor"
}
