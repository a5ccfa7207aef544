import Storage

/// One batch of rows the seeder wants written, table by table. Better Auth's rows are flat: `width` values
/// per row, one after another, in the order of that table's `SeedColumns`. Sync rows refer to their owner by
/// its position in the batch, since the owner's rowid is only known once it is inserted.
struct SeedBatch: Sendable {
    var users: [SQLValue] = []
    var accounts: [SQLValue] = []
    var sessions: [SQLValue] = []
    var verifications: [SQLValue] = []
    var syncUsers: [SyncUser] = []
    var workspaces: [Workspace] = []
    var subscriptions: [Subscription] = []
    var roles: [Role] = []

    struct SyncUser: Sendable { let sub: String, created: String }
    /// `owner` is the position of the owning sync user in this batch.
    struct Workspace: Sendable { let id: String, owner: Int, name: String, created: String }
    struct Subscription: Sendable { let id: String, user: Int, plan: String, status: String, periodEnd: String, created: String }
    struct Role: Sendable { let sub: String, role: String, granted: String }
}

/// The columns of one Better Auth table the seeder fills, and where each field goes in a row.
struct SeedColumns: Sendable {
    let table: AuthSchema.Table
    let fields: [AuthSchema.Field]
    let slots: [AuthSchema.Field: Int]

    init(table: AuthSchema.Table, wanted: [AuthSchema.Field]) {
        self.table = table
        fields = wanted.filter(table.has)
        slots = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1, $0) })
    }

    var width: Int { fields.count }
    func slot(_ field: AuthSchema.Field) -> Int? { slots[field] }

    /// `INSERT INTO table (columns)`, for `BulkInsert`.
    var insertPrefix: String {
        "INSERT INTO \(table.sql) (\(fields.map { table.col($0) }.joined(separator: ", ")))"
    }
}

/// The shapes of Better Auth's tables for seeding: computed once, shared by the builder and the inserter.
struct SeedLayout: Sendable {
    let users: SeedColumns, accounts: SeedColumns, sessions: SeedColumns
    let verifications: SeedColumns?

    init(schema: AuthSchema) {
        users = SeedColumns(table: schema.user, wanted: [.id, .name, .email, .emailVerified, .image, .createdAt, .updatedAt])
        accounts = SeedColumns(table: schema.account, wanted: [.id, .issuer, .accountId, .providerId, .userId, .accessToken, .refreshToken, .idToken, .accessTokenExpiresAt, .scope, .password, .createdAt, .updatedAt])
        sessions = SeedColumns(table: schema.session, wanted: [.id, .expiresAt, .token, .createdAt, .updatedAt, .ipAddress, .userAgent, .userId])
        verifications = schema.verification.map {
            SeedColumns(table: $0, wanted: [.id, .identifier, .value, .expiresAt, .createdAt, .updatedAt])
        }
    }
}

/// Inserts rows of one table through multi-row `INSERT … VALUES (…), (…), …` statements: one statement run
/// writes `chunk` rows with the table's and its indexes' cursors opened once, where a statement per row
/// opens and positions them again for every row. The rest of a batch goes through a one-row statement.
final class BulkInsert {
    /// SQLite's statements are held and stepped directly (the seed's hot path); another engine prepares the same
    /// SQL once per connection behind `execute`.
    private enum Target {
        case sqlite(many: Statement, one: Statement)
        case other(SQLDatabase, many: String, one: String)
    }
    private let target: Target
    private let width: Int, chunk: Int

    /// `prefix` is `INSERT INTO table (columns)`; `width` the number of columns.
    init(_ db: SQLDatabase, prefix: String, width: Int, chunk: Int = 64) throws {
        let row = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        let many = prefix + " VALUES " + Array(repeating: row, count: chunk).joined(separator: ", ")
        let one = prefix + " VALUES " + row
        if let sqlite = db as? SQLiteDatabase {
            target = .sqlite(many: try sqlite.statement(many), one: try sqlite.statement(one))
        } else {
            target = .other(db, many: many, one: one)
        }
        self.width = width
        self.chunk = chunk
    }

    /// Inserts `values`, `width` per row.
    func insert(_ values: [SQLValue]) throws {
        precondition(values.count % width == 0, "rows are \(width) values wide")
        var start = 0
        while values.count - start >= chunk * width {
            try execute(many: true, values[start..<start + chunk * width])
            start += chunk * width
        }
        while start < values.count {
            try execute(many: false, values[start..<start + width])
            start += width
        }
    }

    private func execute(many: Bool, _ values: ArraySlice<SQLValue>) throws {
        switch target {
        case .sqlite(let manyStatement, let oneStatement):
            try (many ? manyStatement : oneStatement).execute(values)
        case .other(let db, let manySQL, let oneSQL):
            try db.execute(many ? manySQL : oneSQL, Array(values))
        }
    }
}

/// Writes batches of seed rows, parents before children, resolving sync owners to their rowids.
final class SeedInserter {
    private let db: SQLDatabase
    private let users: BulkInsert, accounts: BulkInsert, sessions: BulkInsert
    private let verifications: BulkInsert?
    private let workspaces: BulkInsert, subscriptions: BulkInsert
    private let syncInsert: String, roleInsert: String

    init(store: Store, layout: SeedLayout) throws {
        let db = store.db
        self.db = db
        users = try BulkInsert(db, prefix: layout.users.insertPrefix, width: layout.users.width)
        accounts = try BulkInsert(db, prefix: layout.accounts.insertPrefix, width: layout.accounts.width)
        sessions = try BulkInsert(db, prefix: layout.sessions.insertPrefix, width: layout.sessions.width)
        verifications = try layout.verifications.map { try BulkInsert(db, prefix: $0.insertPrefix, width: $0.width) }
        workspaces = try BulkInsert(db, prefix: "INSERT INTO workspaces (id, owner_id, name, created_at)", width: 4)
        subscriptions = try BulkInsert(db, prefix: "INSERT INTO subscriptions (id, user_id, plan, status, current_period_end, created_at)", width: 6)
        // One row at a time: each sync user's rowid is read back for the rows it owns.
        syncInsert = "INSERT INTO users (sub, display_name, created_at) VALUES (?, NULL, ?) RETURNING id"
        roleInsert = "INSERT INTO allow_list (sub, role, granted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
    }

    /// Inserts one batch; call inside a write transaction.
    func insert(_ batch: SeedBatch) throws {
        try users.insert(batch.users)
        try accounts.insert(batch.accounts)
        try sessions.insert(batch.sessions)
        if let verifications { try verifications.insert(batch.verifications) }
        var syncRowIDs: [Int64] = []
        syncRowIDs.reserveCapacity(batch.syncUsers.count)
        for user in batch.syncUsers {
            syncRowIDs.append(try db.scalar(syncInsert, [SQLValue.text(user.sub), .text(user.created)]).int64 ?? 0)
        }
        try workspaces.insert(batch.workspaces.flatMap { [.text($0.id), .integer(syncRowIDs[$0.owner]), .text($0.name), .text($0.created)] as [SQLValue] })
        try subscriptions.insert(batch.subscriptions.flatMap {
            [.text($0.id), .integer(syncRowIDs[$0.user]), .text($0.plan), .text($0.status), .text($0.periodEnd), .text($0.created)] as [SQLValue]
        })
        for role in batch.roles { try db.execute(roleInsert, [SQLValue.text(role.sub), .text(role.role), .text(role.granted)]) }
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
    /// The batch being built.
    private(set) var batch = SeedBatch()

    init(layout: SeedLayout) {
        self.layout = layout
        let users = layout.users, accounts = layout.accounts, sessions = layout.sessions
        u = UserSlots(id: users.slot(.id), name: users.slot(.name), email: users.slot(.email), verified: users.slot(.emailVerified),
                      image: users.slot(.image), created: users.slot(.createdAt), updated: users.slot(.updatedAt))
        a = AccountSlots(id: accounts.slot(.id), issuer: accounts.slot(.issuer), accountID: accounts.slot(.accountId),
                         provider: accounts.slot(.providerId), user: accounts.slot(.userId), access: accounts.slot(.accessToken),
                         refresh: accounts.slot(.refreshToken), idToken: accounts.slot(.idToken), accessExpires: accounts.slot(.accessTokenExpiresAt),
                         scope: accounts.slot(.scope), password: accounts.slot(.password), created: accounts.slot(.createdAt), updated: accounts.slot(.updatedAt))
        s = SessionSlots(id: sessions.slot(.id), expires: sessions.slot(.expiresAt), token: sessions.slot(.token), created: sessions.slot(.createdAt),
                         updated: sessions.slot(.updatedAt), ip: sessions.slot(.ipAddress), agent: sessions.slot(.userAgent), user: sessions.slot(.userId))
        userCreated = users.table.encoding(.createdAt); userUpdated = users.table.encoding(.updatedAt)
        accountCreated = accounts.table.encoding(.createdAt); accountUpdated = accounts.table.encoding(.updatedAt)
        accountAccessExpires = accounts.table.encoding(.accessTokenExpiresAt)
        sessionCreated = sessions.table.encoding(.createdAt); sessionUpdated = sessions.table.encoding(.updatedAt)
        sessionExpires = sessions.table.encoding(.expiresAt)
    }

    /// Hands over the rows built so far and starts a new batch.
    func takeBatch() -> SeedBatch {
        let full = batch
        // The next batch is about as big: reserving that much spares the growing arrays their copies.
        batch = SeedBatch()
        batch.users.reserveCapacity(full.users.count + full.users.count / 8)
        batch.accounts.reserveCapacity(full.accounts.count + full.accounts.count / 8)
        batch.sessions.reserveCapacity(full.sessions.count + full.sessions.count / 8)
        batch.syncUsers.reserveCapacity(full.syncUsers.count + full.syncUsers.count / 8)
        batch.workspaces.reserveCapacity(full.workspaces.count + full.workspaces.count / 8)
        return full
    }

    /// Appends one row of `width` values, set by `fill` through their slots.
    private func append(_ rows: inout [SQLValue], width: Int, _ fill: (_ set: (Int?, SQLValue) -> Void) -> Void) {
        let base = rows.count
        rows.append(contentsOf: repeatElement(.null, count: width))
        fill { slot, value in if let slot { rows[base + slot] = value } }
    }

    func user(name: String, email: String, verified: Bool, created: Timestamp, random: inout DemoRandom) -> String {
        let id = random.sequentialID()
        append(&batch.users, width: layout.users.width) { set in
            set(u.id, .text(id)); set(u.name, .text(name)); set(u.email, .text(email.lowercased()))
            set(u.verified, .integer(verified ? 1 : 0)); set(u.created, userCreated.encode(created)); set(u.updated, userUpdated.encode(created))
        }
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
        batch.accounts.append(contentsOf: row)
    }

    func session(user: String, created: Timestamp, expires: Timestamp, ip: String, agent: String, random: inout DemoRandom) {
        let id = random.sequentialID(), token = random.sequentialID()
        append(&batch.sessions, width: layout.sessions.width) { set in
            set(s.id, .text(id)); set(s.expires, sessionExpires.encode(expires)); set(s.token, .text(token))
            set(s.created, sessionCreated.encode(created)); set(s.updated, sessionUpdated.encode(created))
            set(s.ip, .text(ip)); set(s.agent, .text(agent)); set(s.user, .text(user))
        }
    }

    func verification(identifier: String, created: Timestamp, random: inout DemoRandom) -> Bool {
        guard let columns = layout.verifications else { return false }
        var row = [SQLValue](repeating: .null, count: columns.width)
        func set(_ field: AuthSchema.Field, _ value: SQLValue) { if let slot = columns.slot(field) { row[slot] = value } }
        set(.id, .text(random.alphanumeric(32)))
        set(.identifier, .text(identifier + ":" + random.alphanumeric(12)))
        set(.value, .text(random.alphanumeric(32)))
        set(.expiresAt, columns.table.encoding(.expiresAt).encode(created.adding(seconds: 3600)))
        set(.createdAt, columns.table.encoding(.createdAt).encode(created))
        set(.updatedAt, columns.table.encoding(.updatedAt).encode(created))
        batch.verifications.append(contentsOf: row)
        return true
    }

    /// A sync users row; returns its position in the batch, for the rows it owns.
    func syncUser(sub: String, created: Timestamp) -> Int {
        batch.syncUsers.append(SeedBatch.SyncUser(sub: sub, created: created.iso8601))
        return batch.syncUsers.count - 1
    }

    func workspace(owner: Int, name: String, created: Timestamp, random: inout DemoRandom) {
        batch.workspaces.append(SeedBatch.Workspace(id: "ws_" + random.sequentialID(), owner: owner, name: name, created: created.iso8601))
    }

    func subscription(user: Int, plan: String, status: String, periodEnd: Timestamp, created: Timestamp, random: inout DemoRandom) {
        batch.subscriptions.append(SeedBatch.Subscription(id: "sub_" + random.sequentialID(), user: user, plan: plan, status: status,
                                                          periodEnd: periodEnd.iso8601, created: created.iso8601))
    }

    func role(sub: String, role: String, granted: Timestamp) {
        batch.roles.append(SeedBatch.Role(sub: sub, role: role, granted: granted.iso8601))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
