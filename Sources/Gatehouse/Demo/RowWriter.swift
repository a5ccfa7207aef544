import Storage

/// Writes demo rows into Better Auth's and the sync server's tables through prepared statements,
/// in the column names and date encodings this database uses.
///
/// Each insert has a fixed list of the fields this database has; values are placed by position, so the
/// hot path allocates one array per row and hashes nothing.
final class RowWriter {
    /// A prepared INSERT and the position of each field in it (nil when this database lacks the field).
    struct Insert {
        let statement: Statement
        let slots: [String: Int]
        let width: Int

        init(_ db: Database, table: AuthSchema.Table, fields: [String]) throws {
            let present = fields.filter(table.has)
            let columns = present.map(table.col).joined(separator: ", ")
            let marks = Array(repeating: "?", count: present.count).joined(separator: ", ")
            statement = try db.statement("INSERT INTO \(table.sql) (\(columns)) VALUES (\(marks))")
            slots = Dictionary(uniqueKeysWithValues: present.enumerated().map { ($1, $0) })
            width = present.count
        }

        func slot(_ field: String) -> Int? { slots[field] }
    }

    /// Positions resolved once, so rows are built without dictionary lookups.
    struct UserSlots { let id, name, email, verified, image, created, updated: Int? }
    struct AccountSlots { let id, issuer, accountID, provider, user, access, refresh, idToken, accessExpires, scope, password, created, updated: Int? }
    struct SessionSlots { let id, expires, token, created, updated, ip, agent, user: Int? }

    private let store: Store
    private let users: Insert, accounts: Insert, sessions: Insert
    private let verifications: Insert?
    private let u: UserSlots, a: AccountSlots, s: SessionSlots
    private let userCreated: DateEncoding, userUpdated: DateEncoding
    private let accountCreated: DateEncoding, accountUpdated: DateEncoding, accountAccessExpires: DateEncoding
    private let sessionCreated: DateEncoding, sessionUpdated: DateEncoding, sessionExpires: DateEncoding
    private let syncInsert: Statement, workspaceInsert: Statement, subscriptionInsert: Statement, roleInsert: Statement
    private var accountSequence = 0

    init(store: Store) throws {
        self.store = store
        let schema = store.schema, db = store.db
        users = try Insert(db, table: schema.user, fields: ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt"])
        accounts = try Insert(db, table: schema.account, fields: ["id", "issuer", "accountId", "providerId", "userId", "accessToken", "refreshToken",
                                                                  "idToken", "accessTokenExpiresAt", "scope", "password", "createdAt", "updatedAt"])
        sessions = try Insert(db, table: schema.session, fields: ["id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId"])
        verifications = try schema.verification.map {
            try Insert(db, table: $0, fields: ["id", "identifier", "value", "expiresAt", "createdAt", "updatedAt"])
        }
        u = UserSlots(id: users.slot("id"), name: users.slot("name"), email: users.slot("email"), verified: users.slot("emailVerified"),
                      image: users.slot("image"), created: users.slot("createdAt"), updated: users.slot("updatedAt"))
        a = AccountSlots(id: accounts.slot("id"), issuer: accounts.slot("issuer"), accountID: accounts.slot("accountId"),
                         provider: accounts.slot("providerId"), user: accounts.slot("userId"), access: accounts.slot("accessToken"),
                         refresh: accounts.slot("refreshToken"), idToken: accounts.slot("idToken"), accessExpires: accounts.slot("accessTokenExpiresAt"),
                         scope: accounts.slot("scope"), password: accounts.slot("password"), created: accounts.slot("createdAt"), updated: accounts.slot("updatedAt"))
        s = SessionSlots(id: sessions.slot("id"), expires: sessions.slot("expiresAt"), token: sessions.slot("token"), created: sessions.slot("createdAt"),
                         updated: sessions.slot("updatedAt"), ip: sessions.slot("ipAddress"), agent: sessions.slot("userAgent"), user: sessions.slot("userId"))
        userCreated = schema.user.encoding("createdAt"); userUpdated = schema.user.encoding("updatedAt")
        accountCreated = schema.account.encoding("createdAt"); accountUpdated = schema.account.encoding("updatedAt")
        accountAccessExpires = schema.account.encoding("accessTokenExpiresAt")
        sessionCreated = schema.session.encoding("createdAt"); sessionUpdated = schema.session.encoding("updatedAt")
        sessionExpires = schema.session.encoding("expiresAt")
        syncInsert = try db.statement("INSERT INTO users (sub, display_name, created_at) VALUES (?, ?, ?)")
        workspaceInsert = try db.statement("INSERT INTO workspaces (id, owner_id, name, created_at) VALUES (?, ?, ?, ?)")
        subscriptionInsert = try db.statement("INSERT INTO subscriptions (id, user_id, plan, status, current_period_end, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        roleInsert = try db.statement("INSERT OR IGNORE INTO allow_list (sub, role, granted_at) VALUES (?, ?, ?)")
    }

    private func run(_ statement: Statement, _ values: [SQLValue]) throws {
        try statement.bind(values)
        _ = try statement.step()
        statement.reset()
    }

    func user(name: String, email: String, verified: Bool, created: Timestamp, random: inout DemoRandom) throws -> String {
        let id = random.sequentialID()
        var row = [SQLValue](repeating: .null, count: users.width)
        func set(_ slot: Int?, _ value: @autoclosure () -> SQLValue) { if let slot { row[slot] = value() } }
        set(u.id, .text(id)); set(u.name, .text(name)); set(u.email, .text(email.lowercased()))
        set(u.verified, .integer(verified ? 1 : 0)); set(u.created, userCreated.encode(created)); set(u.updated, userUpdated.encode(created))
        try run(users.statement, row)
        return id
    }

    func account(user: String, provider: String, created: Timestamp, random: inout DemoRandom) throws {
        accountSequence += 1
        var row = [SQLValue](repeating: .null, count: accounts.width)
        func set(_ slot: Int?, _ value: @autoclosure () -> SQLValue) { if let slot { row[slot] = value() } }
        let accountID: String
        switch provider {
        case "apple":
            accountID = "0\(String(accountSequence).leftPadded(to: 7)).\(random.hex(32)).\(random.decimal(4))"
            set(a.scope, .text("email name"))
            set(a.idToken, .text("demo-id-token-" + random.alphanumeric(24)))
        case "google":
            // Google subs are 21 digits; a counting prefix keeps the (issuer, accountId) index append-only.
            accountID = "1" + String(accountSequence).leftPadded(to: 9) + random.decimal(11)
            set(a.scope, .text("openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile"))
            set(a.access, .text("demo-access-token-" + random.alphanumeric(24)))
            set(a.idToken, .text("demo-id-token-" + random.alphanumeric(24)))
            set(a.accessExpires, accountAccessExpires.encode(created.adding(seconds: 3600)))
        default:
            accountID = user
            // Better Auth's scrypt format, salt:key in hex; random, so it matches no password.
            set(a.password, .text(random.hex(32) + ":" + random.hex(128)))
        }
        set(a.id, .text(random.sequentialID())); set(a.issuer, .text(Issuer.forProvider(provider))); set(a.accountID, .text(accountID))
        set(a.provider, .text(provider)); set(a.user, .text(user))
        set(a.created, accountCreated.encode(created)); set(a.updated, accountUpdated.encode(created))
        try run(accounts.statement, row)
    }

    func session(user: String, created: Timestamp, expires: Timestamp, ip: String, agent: String, random: inout DemoRandom) throws {
        var row = [SQLValue](repeating: .null, count: sessions.width)
        func set(_ slot: Int?, _ value: @autoclosure () -> SQLValue) { if let slot { row[slot] = value() } }
        set(s.id, .text(random.sequentialID())); set(s.expires, sessionExpires.encode(expires)); set(s.token, .text(random.sequentialID()))
        set(s.created, sessionCreated.encode(created)); set(s.updated, sessionUpdated.encode(created))
        set(s.ip, .text(ip)); set(s.agent, .text(agent)); set(s.user, .text(user))
        try run(sessions.statement, row)
    }

    func verification(identifier: String, created: Timestamp, random: inout DemoRandom) throws -> Bool {
        guard let insert = verifications, let table = store.schema.verification else { return false }
        var row = [SQLValue](repeating: .null, count: insert.width)
        func set(_ field: String, _ value: SQLValue) { if let slot = insert.slot(field) { row[slot] = value } }
        set("id", .text(random.alphanumeric(32)))
        set("identifier", .text(identifier + ":" + random.alphanumeric(12)))
        set("value", .text(random.alphanumeric(32)))
        set("expiresAt", table.encoding("expiresAt").encode(created.adding(seconds: 3600)))
        set("createdAt", table.encoding("createdAt").encode(created))
        set("updatedAt", table.encoding("updatedAt").encode(created))
        try run(insert.statement, row)
        return true
    }

    func syncUser(sub: String, created: Timestamp) throws -> Int64 {
        try run(syncInsert, [.text(sub), .null, .text(created.iso8601)])
        return store.db.lastInsertRowID
    }

    func workspace(owner: Int64, name: String, created: Timestamp, random: inout DemoRandom) throws {
        try run(workspaceInsert, [.text("ws_" + random.sequentialID()), .integer(owner), .text(name), .text(created.iso8601)])
    }

    func subscription(user: Int64, plan: String, status: String, periodEnd: Timestamp, created: Timestamp, random: inout DemoRandom) throws {
        try run(subscriptionInsert, [.text("sub_" + random.sequentialID()), .integer(user), .text(plan), .text(status), .text(periodEnd.iso8601), .text(created.iso8601)])
    }

    func role(sub: String, role: String, granted: Timestamp) throws {
        try run(roleInsert, [.text(sub), .text(role), .text(granted.iso8601)])
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
