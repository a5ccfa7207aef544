import Storage

/// One row the seeder wants written. Sync rows refer to their owner by its position in the batch,
/// since the owner's rowid is only known once it is inserted.
enum SeedRow: Sendable {
    case user([SQLValue])
    case account([SQLValue])
    case session([SQLValue])
    case verification([SQLValue])
    /// The `local`-th sync user of its batch.
    case syncUser(local: Int, sub: String, created: String)
    case workspace(id: String, ownerLocal: Int, name: String, created: String)
    case subscription(id: String, userLocal: Int, plan: String, status: String, periodEnd: String, created: String)
    case role(sub: String, role: String, granted: String)
}

/// The columns of one Better Auth table the seeder fills, and where each field goes in a row.
struct SeedColumns: Sendable {
    let table: AuthSchema.Table
    let fields: [String]
    let slots: [String: Int]

    init(table: AuthSchema.Table, wanted: [String]) {
        self.table = table
        fields = wanted.filter(table.has)
        slots = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1, $0) })
    }

    var width: Int { fields.count }
    func slot(_ field: String) -> Int? { slots[field] }

    var insertSQL: String {
        let marks = Array(repeating: "?", count: fields.count).joined(separator: ", ")
        return "INSERT INTO \(table.sql) (\(fields.map(table.col).joined(separator: ", "))) VALUES (\(marks))"
    }
}

/// The shapes of Better Auth's tables for seeding: computed once, shared by the builder and the inserter.
struct SeedLayout: Sendable {
    let users: SeedColumns, accounts: SeedColumns, sessions: SeedColumns
    let verifications: SeedColumns?

    init(schema: AuthSchema) {
        users = SeedColumns(table: schema.user, wanted: ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt"])
        accounts = SeedColumns(table: schema.account, wanted: ["id", "issuer", "accountId", "providerId", "userId", "accessToken", "refreshToken",
                                                               "idToken", "accessTokenExpiresAt", "scope", "password", "createdAt", "updatedAt"])
        sessions = SeedColumns(table: schema.session, wanted: ["id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId"])
        verifications = schema.verification.map {
            SeedColumns(table: $0, wanted: ["id", "identifier", "value", "expiresAt", "createdAt", "updatedAt"])
        }
    }
}

/// Writes batches of seed rows through prepared statements, resolving sync owners to their rowids.
final class SeedInserter {
    private let db: Database
    private let users: Statement, accounts: Statement, sessions: Statement
    private let verifications: Statement?
    private let syncInsert: Statement, workspaceInsert: Statement, subscriptionInsert: Statement, roleInsert: Statement

    init(store: Store, layout: SeedLayout) throws {
        let db = store.db
        self.db = db
        users = try db.statement(layout.users.insertSQL)
        accounts = try db.statement(layout.accounts.insertSQL)
        sessions = try db.statement(layout.sessions.insertSQL)
        verifications = try layout.verifications.map { try db.statement($0.insertSQL) }
        syncInsert = try db.statement("INSERT INTO users (sub, display_name, created_at) VALUES (?, NULL, ?)")
        workspaceInsert = try db.statement("INSERT INTO workspaces (id, owner_id, name, created_at) VALUES (?, ?, ?, ?)")
        subscriptionInsert = try db.statement("INSERT INTO subscriptions (id, user_id, plan, status, current_period_end, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        roleInsert = try db.statement("INSERT OR IGNORE INTO allow_list (sub, role, granted_at) VALUES (?, ?, ?)")
    }

    private func run(_ statement: Statement, _ values: [SQLValue]) throws {
        try statement.bind(values)
        _ = try statement.step()
        statement.reset()
    }

    /// Inserts one batch; call inside a write transaction.
    func insert(_ rows: [SeedRow]) throws {
        var syncRowIDs: [Int64] = []
        for row in rows {
            switch row {
            case .user(let values): try run(users, values)
            case .account(let values): try run(accounts, values)
            case .session(let values): try run(sessions, values)
            case .verification(let values): if let verifications { try run(verifications, values) }
            case .syncUser(let local, let sub, let created):
                try run(syncInsert, [.text(sub), .text(created)])
                precondition(local == syncRowIDs.count, "sync users are numbered in batch order")
                syncRowIDs.append(db.lastInsertRowID)
            case .workspace(let id, let owner, let name, let created):
                try run(workspaceInsert, [.text(id), .integer(syncRowIDs[owner]), .text(name), .text(created)])
            case .subscription(let id, let user, let plan, let status, let periodEnd, let created):
                try run(subscriptionInsert, [.text(id), .integer(syncRowIDs[user]), .text(plan), .text(status), .text(periodEnd), .text(created)])
            case .role(let sub, let role, let granted):
                try run(roleInsert, [.text(sub), .text(role), .text(granted)])
            }
        }
    }
}

/// Builds demo rows as Better Auth writes them (column names and date encodings of this database),
/// without touching the database: the seeder builds on one thread while another inserts.
///
/// Each row is built by position, so the hot path allocates one array per row and hashes nothing.
final class SeedRowBuilder {

    /// Positions resolved once, so rows are built without dictionary lookups.
    struct UserSlots { let id, name, email, verified, image, created, updated: Int? }
    struct AccountSlots { let id, issuer, accountID, provider, user, access, refresh, idToken, accessExpires, scope, password, created, updated: Int? }
    struct SessionSlots { let id, expires, token, created, updated, ip, agent, user: Int? }

    private let layout: SeedLayout
    private let u: UserSlots, a: AccountSlots, s: SessionSlots
    private let userCreated: DateEncoding, userUpdated: DateEncoding
    private let accountCreated: DateEncoding, accountUpdated: DateEncoding, accountAccessExpires: DateEncoding
    private let sessionCreated: DateEncoding, sessionUpdated: DateEncoding, sessionExpires: DateEncoding
    private var accountSequence = 0
    /// The batch being built, and how many sync users it holds.
    private(set) var rows: [SeedRow] = []
    private var syncUsers = 0

    init(layout: SeedLayout) {
        self.layout = layout
        let users = layout.users, accounts = layout.accounts, sessions = layout.sessions
        u = UserSlots(id: users.slot("id"), name: users.slot("name"), email: users.slot("email"), verified: users.slot("emailVerified"),
                      image: users.slot("image"), created: users.slot("createdAt"), updated: users.slot("updatedAt"))
        a = AccountSlots(id: accounts.slot("id"), issuer: accounts.slot("issuer"), accountID: accounts.slot("accountId"),
                         provider: accounts.slot("providerId"), user: accounts.slot("userId"), access: accounts.slot("accessToken"),
                         refresh: accounts.slot("refreshToken"), idToken: accounts.slot("idToken"), accessExpires: accounts.slot("accessTokenExpiresAt"),
                         scope: accounts.slot("scope"), password: accounts.slot("password"), created: accounts.slot("createdAt"), updated: accounts.slot("updatedAt"))
        s = SessionSlots(id: sessions.slot("id"), expires: sessions.slot("expiresAt"), token: sessions.slot("token"), created: sessions.slot("createdAt"),
                         updated: sessions.slot("updatedAt"), ip: sessions.slot("ipAddress"), agent: sessions.slot("userAgent"), user: sessions.slot("userId"))
        userCreated = users.table.encoding("createdAt"); userUpdated = users.table.encoding("updatedAt")
        accountCreated = accounts.table.encoding("createdAt"); accountUpdated = accounts.table.encoding("updatedAt")
        accountAccessExpires = accounts.table.encoding("accessTokenExpiresAt")
        sessionCreated = sessions.table.encoding("createdAt"); sessionUpdated = sessions.table.encoding("updatedAt")
        sessionExpires = sessions.table.encoding("expiresAt")
    }

    /// Hands over the rows built so far and starts a new batch.
    func takeBatch() -> [SeedRow] {
        defer {
            rows = []
            rows.reserveCapacity(4096)
            syncUsers = 0
        }
        return rows
    }

    func user(name: String, email: String, verified: Bool, created: Timestamp, random: inout DemoRandom) -> String {
        let id = random.sequentialID()
        var row = [SQLValue](repeating: .null, count: layout.users.width)
        func set(_ slot: Int?, _ value: @autoclosure () -> SQLValue) { if let slot { row[slot] = value() } }
        set(u.id, .text(id)); set(u.name, .text(name)); set(u.email, .text(email.lowercased()))
        set(u.verified, .integer(verified ? 1 : 0)); set(u.created, userCreated.encode(created)); set(u.updated, userUpdated.encode(created))
        rows.append(.user(row))
        return id
    }

    func account(user: String, provider: String, created: Timestamp, random: inout DemoRandom) {
        accountSequence += 1
        var row = [SQLValue](repeating: .null, count: layout.accounts.width)
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
        rows.append(.account(row))
    }

    func session(user: String, created: Timestamp, expires: Timestamp, ip: String, agent: String, random: inout DemoRandom) {
        var row = [SQLValue](repeating: .null, count: layout.sessions.width)
        func set(_ slot: Int?, _ value: @autoclosure () -> SQLValue) { if let slot { row[slot] = value() } }
        set(s.id, .text(random.sequentialID())); set(s.expires, sessionExpires.encode(expires)); set(s.token, .text(random.sequentialID()))
        set(s.created, sessionCreated.encode(created)); set(s.updated, sessionUpdated.encode(created))
        set(s.ip, .text(ip)); set(s.agent, .text(agent)); set(s.user, .text(user))
        rows.append(.session(row))
    }

    func verification(identifier: String, created: Timestamp, random: inout DemoRandom) -> Bool {
        guard let columns = layout.verifications else { return false }
        var row = [SQLValue](repeating: .null, count: columns.width)
        func set(_ field: String, _ value: SQLValue) { if let slot = columns.slot(field) { row[slot] = value } }
        set("id", .text(random.alphanumeric(32)))
        set("identifier", .text(identifier + ":" + random.alphanumeric(12)))
        set("value", .text(random.alphanumeric(32)))
        set("expiresAt", columns.table.encoding("expiresAt").encode(created.adding(seconds: 3600)))
        set("createdAt", columns.table.encoding("createdAt").encode(created))
        set("updatedAt", columns.table.encoding("updatedAt").encode(created))
        rows.append(.verification(row))
        return true
    }

    /// A sync users row; returns its position in the batch, for the rows it owns.
    func syncUser(sub: String, created: Timestamp) -> Int {
        rows.append(.syncUser(local: syncUsers, sub: sub, created: created.iso8601))
        syncUsers += 1
        return syncUsers - 1
    }

    func workspace(owner: Int, name: String, created: Timestamp, random: inout DemoRandom) {
        rows.append(.workspace(id: "ws_" + random.sequentialID(), ownerLocal: owner, name: name, created: created.iso8601))
    }

    func subscription(user: Int, plan: String, status: String, periodEnd: Timestamp, created: Timestamp, random: inout DemoRandom) {
        rows.append(.subscription(id: "sub_" + random.sequentialID(), userLocal: user, plan: plan, status: status,
                                  periodEnd: periodEnd.iso8601, created: created.iso8601))
    }

    func role(sub: String, role: String, granted: Timestamp) {
        rows.append(.role(sub: sub, role: role, granted: granted.iso8601))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
