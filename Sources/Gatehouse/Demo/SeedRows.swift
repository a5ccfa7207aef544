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
    /// (user id, name key) pairs for the name search index, when the layout asks for them (`DemoSeedLoad.buildsNameKeys`).
    var nameKeys: [SQLValue] = []

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

    /// The physical columns, in `fields` order, for `BulkInsert`.
    var columns: [String] { fields.map { table.columns[$0] ?? $0.rawValue } }
}

/// The shapes of Better Auth's tables for seeding: computed once, shared by the builder and the inserter.
struct SeedLayout: Sendable {
    let users: SeedColumns, accounts: SeedColumns, sessions: SeedColumns
    let verifications: SeedColumns?
    /// Whether the builder also makes each user's name search key (`UserSearchIndex.keyRow`), for a bulk load
    /// that writes the index with the users (`DemoSeedLoad.buildsNameKeys`).
    var nameKeys = false

    init(schema: AuthSchema) {
        users = SeedColumns(table: schema.user, wanted: [.id, .name, .email, .emailVerified, .image, .createdAt, .updatedAt])
        accounts = SeedColumns(table: schema.account, wanted: [.id, .issuer, .accountId, .providerId, .userId, .accessToken, .refreshToken, .idToken, .accessTokenExpiresAt, .scope, .password, .createdAt, .updatedAt])
        sessions = SeedColumns(table: schema.session, wanted: [.id, .expiresAt, .token, .createdAt, .updatedAt, .ipAddress, .userAgent, .userId])
        verifications = schema.verification.map {
            SeedColumns(table: $0, wanted: [.id, .identifier, .value, .expiresAt, .createdAt, .updatedAt])
        }
    }

    /// Better Auth's tables the seed writes.
    var tables: [String] { [users.table.name, accounts.table.name, sessions.table.name] + (verifications.map { [$0.table.name] } ?? []) }
}

/// One engine's fastest way to append whole rows to one table, made by its `StoreEngine.bulkAppender` (SQLite:
/// prepared multi-row `INSERT`s; Postgres: `COPY … FROM STDIN`).
package protocol BulkAppender {
    /// Appends `values`, whole rows of the table's columns in order.
    func append(_ values: [SQLValue]) throws
}

/// Inserts rows of one table in bulk, through the engine's `BulkAppender` (see `StoreEngine.bulkAppender`), or through
/// the seam's multi-row `INSERT … VALUES (…), (…), …` statements when the engine has none: one statement run writes
/// `chunk` rows with the table's and its indexes' cursors opened once, where a statement per row opens and positions
/// them again for every row; the rest of a batch goes through a one-row statement.
package final class BulkInsert {
    private let appender: (any BulkAppender)?
    private let db: SQLDatabase
    private let many: String, one: String
    private let width: Int, chunk: Int

    init(_ db: SQLDatabase, engine: any StoreEngine, table: String, columns: [String], chunk: Int = 64) throws {
        let prefix = "INSERT INTO \(SQL.quote(table)) (\(columns.map(SQL.quote).joined(separator: ", ")))"
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        many = prefix + " VALUES " + Array(repeating: row, count: chunk).joined(separator: ", ")
        one = prefix + " VALUES " + row
        self.db = db
        self.width = columns.count
        self.chunk = chunk
        appender = try engine.bulkAppender(db, table: table, columns: columns, many: many, one: one, chunk: chunk)
    }

    /// Inserts `values`, `width` per row.
    func insert(_ values: [SQLValue]) throws {
        precondition(values.count % width == 0, "rows are \(width) values wide")
        if let appender { return try appender.append(values) }
        try Self.inChunks(values, width: width, chunk: chunk) { many, values in try db.execute(many ? self.many : one, Array(values)) }
    }

    /// Runs `execute` on whole chunks of `chunk` rows (`many`), then on the rest one row at a time.
    package static func inChunks(_ values: [SQLValue], width: Int, chunk: Int, _ execute: (_ many: Bool, ArraySlice<SQLValue>) throws -> Void) throws {
        var start = 0
        while values.count - start >= chunk * width {
            try execute(true, values[start..<start + chunk * width])
            start += chunk * width
        }
        while start < values.count {
            try execute(false, values[start..<start + width])
            start += width
        }
    }
}

/// Writes batches of seed rows, parents before children, resolving sync owners to their rowids.
package final class SeedInserter {
    private let db: SQLDatabase
    private let users: BulkInsert, accounts: BulkInsert, sessions: BulkInsert
    private let verifications: BulkInsert?
    private let workspaces: BulkInsert, subscriptions: BulkInsert
    private let roleInsert: String

    init(store: Store, layout: SeedLayout) throws {
        let db = store.db
        self.db = db
        users = try BulkInsert(db, engine: store.engine, table: layout.users.table.name, columns: layout.users.columns)
        accounts = try BulkInsert(db, engine: store.engine, table: layout.accounts.table.name, columns: layout.accounts.columns)
        sessions = try BulkInsert(db, engine: store.engine, table: layout.sessions.table.name, columns: layout.sessions.columns)
        verifications = try layout.verifications.map { try BulkInsert(db, engine: store.engine, table: $0.table.name, columns: $0.columns) }
        workspaces = try BulkInsert(db, engine: store.engine, table: "workspaces", columns: ["id", "owner_id", "name", "created_at"])
        subscriptions = try BulkInsert(db, engine: store.engine, table: "subscriptions", columns: ["id", "user_id", "plan", "status", "current_period_end", "created_at"])
        roleInsert = "INSERT INTO allow_list (sub, role, granted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
    }

    static let syncChunk = 64

    /// Writes a batch's name keys into the name search index, when the engine's load writes the index with the users
    /// (`DemoSeedLoad.load` sets it); nil leaves them out.
    package var nameKeys: (([SQLValue]) throws -> Void)?

    /// Inserts one batch; call inside a write transaction.
    func insert(_ batch: SeedBatch) throws {
        try users.insert(batch.users)
        if let nameKeys { try nameKeys(batch.nameKeys) }
        try accounts.insert(batch.accounts)
        try sessions.insert(batch.sessions)
        if let verifications { try verifications.insert(batch.verifications) }
        // Sync users go in 64 at a time, each chunk reading back the ids it was given (by sub: RETURNING promises no
        // order), the chunks sent together (`batch`: on a server, many per round trip, which is most of their time).
        let chunks = stride(from: 0, to: batch.syncUsers.count, by: Self.syncChunk).map { batch.syncUsers[$0..<min($0 + Self.syncChunk, batch.syncUsers.count)] }
        let inserted = try db.batch(chunks.map { chunk in
            SQLStatement("INSERT INTO users (sub, display_name, created_at) VALUES "
                            + Array(repeating: "(?, NULL, ?)", count: chunk.count).joined(separator: ", ") + " RETURNING id, sub",
                         chunk.flatMap { [$0.sub, $0.created] as [SQLBindable] })
        })
        var syncRowIDs: [Int64] = []
        syncRowIDs.reserveCapacity(batch.syncUsers.count)
        for (chunk, result) in zip(chunks, inserted) {
            let ids = Dictionary(result.rows.map { ($0[1].string ?? "", $0[0].int64 ?? 0) }, uniquingKeysWith: { first, _ in first })
            syncRowIDs += chunk.map { ids[$0.sub] ?? 0 }
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
    private var verificationSequence: UInt64 = 0
    private var normalizer = NameNormalizer()
    private var keys: [String: String] = [:]
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
        if layout.nameKeys { batch.nameKeys += UserSearchIndex.keyRow(id: id, name: name, normalizer: &normalizer, keys: &keys) }
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
        // The first six characters count, as `sequentialID`'s do, so no two of a seed's verifications share an id; the
        // rest is the random id's own draw, so every other value of the seed keeps its place in the stream.
        verificationSequence += 1
        set(.id, .text(DemoRandom.counter(verificationSequence) + random.alphanumeric(32).dropFirst(6)))
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
