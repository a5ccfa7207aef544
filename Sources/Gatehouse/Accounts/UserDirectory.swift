import Foundation
import Locking
import Storage

/// Finds users and reads everything about one: the service behind `users search` and `users show`
/// (and the console's user pages). Every query goes through the schema map, so one code path serves
/// every Better Auth shape; every value is a bound parameter.
///
///     let directory = UserDirectory(store: store)
///     let found = try directory.search("ana@", limit: 10)
///     let detail = try directory.show("better_auth|" + found.users[0].id.rawValue)
public struct UserDirectory {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// The most results a search returns.
    public static let maxLimit = 1000

    private var user: AuthSchema.Table { store.schema.user }
    private var account: AuthSchema.Table { store.schema.account }
    private var session: AuthSchema.Table { store.schema.session }
    private var db: SQLDatabase { store.db }

    // MARK: - search

    /// Finds users by email substring (any part of the address, the domain included), name substring, exact id, sub or
    /// provider account id, one page at a time. Without `kind` the query's form decides (see `UserQuery.recognise`).
    /// Pages run in `sort`'s order (by default name for a name search, `match` for an email search: the addresses that
    /// start with the query first; email otherwise); `after` is the previous page's
    /// `nextCursor`. Throws `invalid` for a cursor this search did not give.
    ///
    ///     var page = try directory.search("privaterelay", by: .email, limit: 50)
    ///     while let next = page.nextCursor { page = try directory.search("privaterelay", by: .email, limit: 50, after: next) }
    public func search(_ text: String, by kind: UserQueryKind? = nil, limit: Int = 20, sort: UserSort? = nil, after: String? = nil,
                       filters: UserSearchFilters = UserSearchFilters()) throws -> UserSearchResult {
        let query = try UserQuery.validate(text)
        let limit = min(max(limit, 1), Self.maxLimit)
        let kinds = kind.map { [$0] } ?? UserQuery.recognise(query)
        let sort = sort ?? (kinds == [.name] ? .name : kinds == [.email] ? .match : .email)
        let cursor = try after.map { try UserSearchCursor($0, sort: sort) }
        return try db.read {
            let page = try UserSearchPager(db: db, schema: store.schema).page(
                query: query, kinds: kinds, sort: sort, after: cursor, filters: filters, limit: limit,
                exactIDs: { try ids(matching: query, kind: $0, limit: UserSearchPager.maxCandidates) })
            let users = try summaries(page.found)
            return UserSearchResult(query: query, kinds: kinds, limit: limit, truncated: page.next != nil, users: users, sort: sort,
                                    nextCursor: page.next?.encoded)
        }
    }

    /// The SQL of an email prefix search: an index range on the email column in byte order, never `LIKE`.
    static func emailPrefixSQL(_ schema: AuthSchema, dialect: SQLDialect, bounded: Bool) -> String {
        let email = dialect.byteOrdered(schema.user.col(.email))
        return "SELECT \(schema.user.col(.id)) FROM \(schema.user.sql) WHERE \(email) >= ?" + (bounded ? " AND \(email) < ?" : "")
            + " ORDER BY \(email) LIMIT ?"
    }

    private func ids(matching query: String, kind: UserQueryKind, limit: Int) throws -> [BetterAuthUserID] {
        switch kind {
        case .email:
            // Better Auth lowercases emails, so the range over the lowercased prefix is case-insensitive.
            let prefix = query.lowercased()
            let upper = UserQuery.prefixUpperBound(prefix)
            let arguments: [SQLBindable] = upper.map { [prefix, $0, limit] } ?? [prefix, limit]
            return try db.rows(Self.emailPrefixSQL(store.schema, dialect: db.dialect, bounded: upper != nil), arguments).compactMap { $0[0].string.map(BetterAuthUserID.init) }
        case .name:
            return try idsByName(query, limit: limit)
        case .id:
            return try exists(BetterAuthUserID(query)) ? [BetterAuthUserID(query)] : []
        case .sub:
            guard let id = SyncSub(query).userID else {
                throw GatehouseError.invalid("\(UserQuery.display(query)) is not a sync sub", fix: "a sub looks like better_auth|<Better Auth user id>")
            }
            return try exists(id) ? [id] : []
        case .account:
            return Array(try accountOwners(query).prefix(limit))
        }
    }

    /// Name substring search (`NameSearch`): through the trigram index when it can answer, else a scan.
    private func idsByName(_ query: String, limit: Int) throws -> [BetterAuthUserID] {
        try NameSearch(db: db, schema: store.schema).ids(matching: query, limit: limit).ids
    }

    /// Owners of a provider account id, through an index whenever the shape has one: Gatehouse's index
    /// on `accountId`, or Better Auth 1.7's unique `(issuer, accountId)` probed once per issuer.
    func accountOwners(_ accountID: String) throws -> [BetterAuthUserID] {
        let byAccount = "SELECT DISTINCT \(account.col(.userId)) FROM \(account.sql) WHERE \(account.col(.accountId)) = ?"
        let accountColumn = account.column(.accountId)
        let indexes = try db.indexes(of: account.name)
        if AccountIndexes.leadingIndex(indexes, column: accountColumn, byteOrdered: false) == nil, store.schema.hasIssuer,
           let issuerColumn = account.columns[.issuer], AccountIndexes.leadingIndex(indexes, column: issuerColumn, byteOrdered: false) != nil {
            var owners: [BetterAuthUserID] = []
            for issuer in try issuers() {
                let rows = try db.rows(byAccount + " AND \(account.col(.issuer)) = ?", [accountID, issuer])
                owners += rows.compactMap { $0[0].string.map(BetterAuthUserID.init) }
            }
            return owners
        }
        return try db.rows(byAccount, [accountID]).compactMap { $0[0].string.map(BetterAuthUserID.init) }
    }

    /// The distinct issuers, one index seek each.
    private func issuers() throws -> [String] {
        let issuer = account.col(.issuer)
        return try db.rows("""
            WITH RECURSIVE i(v) AS (SELECT min(\(issuer)) FROM \(account.sql)
                UNION ALL SELECT (SELECT min(\(issuer)) FROM \(account.sql) WHERE \(issuer) > i.v) FROM i WHERE i.v IS NOT NULL)
            SELECT v FROM i WHERE v IS NOT NULL
            """).compactMap { $0[0].string }
    }

    private func exists(_ id: BetterAuthUserID) throws -> Bool {
        try db.row("SELECT 1 FROM \(user.sql) WHERE \(user.col(.id)) = ?", [id.rawValue]) != nil
    }

    /// The found users' rows, providers and sync rows, read in one snapshot (one round trip on a server, however
    /// many users matched; a user deleted meanwhile is left out).
    private func summaries(_ found: [(id: BetterAuthUserID, kind: UserQueryKind)]) throws -> [UserSummary] {
        guard !found.isEmpty else { return [] }
        // Whether the sub has a sync `users` row; unknown (nil) when this database has no sync tables.
        let synced = try db.tableExists("users")
        let perUser = synced ? 3 : 2
        var statements: [SQLStatement] = []
        for (id, _) in found {
            statements.append(SQLStatement("SELECT \(user.col(.name)), \(user.col(.email)), \(user.col(.emailVerified)), \(user.col(.createdAt)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [id.rawValue]))
            statements.append(SQLStatement("SELECT DISTINCT \(account.col(.providerId)) FROM \(account.sql) WHERE \(account.col(.userId)) = ? ORDER BY 1", [id.rawValue]))
            if synced { statements.append(SQLStatement("SELECT 1 FROM users WHERE sub = ?", [id.syncSub.rawValue])) }
        }
        let read = try db.snapshot(statements)
        return found.enumerated().compactMap { offset, item in
            let base = offset * perUser
            guard let row = read[base].first else { return nil }
            let providers = read[base + 1].compactMap { $0[0].string }
            let provisioned: Bool? = synced ? !read[base + 2].isEmpty : nil
            let email = row[1].string ?? ""
            let verified = row.bool(row.columns.names[2])
            return UserSummary(id: item.id, name: row[0].string ?? "", email: email, emailVerified: verified,
                               createdAt: DateEncoding.decode(row[3]), providers: providers,
                               flags: UserFlags.flags(email: email, emailVerified: verified, providers: providers, provisioned: provisioned),
                               matchedBy: item.kind)
        }
    }

    // MARK: - show

    /// The user an operator's reference names: a sub (`better_auth|<id>`), an email (exact,
    /// case-insensitive) or a user id. Throws "no such user" (`not_found`) otherwise.
    public func resolve(_ reference: String) throws -> BetterAuthUserID {
        let text = try UserQuery.validate(reference, what: "the user")
        let sql = UserDetailSQL.for(store.schema)
        guard let candidate = try candidate(text, sql: sql), try db.row(sql.exists, [candidate.rawValue]) != nil else {
            throw Self.noSuchUser(text)
        }
        return candidate
    }

    /// The id a reference names: a sub's id, the id an email belongs to (looked up), or the reference itself. Nil
    /// when a sub names no Better Auth user or no user has the email; whether a user has the id is the caller's to ask.
    private func candidate(_ text: String, sql: UserDetailSQL) throws -> BetterAuthUserID? {
        if text.hasPrefix(SyncSub.prefix) { return SyncSub(text).userID }
        if text.contains("@") { return try db.row(sql.idByEmail, [JavaScriptString.toLowerCase(text)])?[0].string.map(BetterAuthUserID.init) }
        return BetterAuthUserID(text)
    }

    private static func noSuchUser(_ text: String) -> GatehouseError {
        GatehouseError.notFound("no such user: \(UserQuery.display(text))",
                                fix: "give a user id, an email or a sub better_auth|<id>; find one with \(command: .usersSearch)")
    }

    /// Everything about one user, read in one snapshot. Token and password values are never read:
    /// only whether each is present. The reads go to the store together (`SQLDatabase.snapshot`: on Postgres one
    /// round trip for all of them; a reference by email looks its id up first).
    public func show(_ reference: String, now: Timestamp = .now(), latestSessions: Int = 5) throws -> UserDetail {
        let text = try UserQuery.validate(reference, what: "the user")
        let sql = UserDetailSQL.for(store.schema)
        guard let id = try candidate(text, sql: sql) else { throw Self.noSuchUser(text) }
        do {
            return try show(id, text: text, sql: sql, syncTables: try store.existingTables(SyncRecord.tables), now: now, latestSessions: latestSessions)
        } catch let error as GatehouseError {
            throw error
        } catch {
            // The sync tables' presence is remembered for a few seconds: a table dropped meanwhile fails the read
            // with the store's error. Ask again; if nothing changed, the error stands.
            let syncTables = try store.existingTables(SyncRecord.tables, fresh: true)
            return try show(id, text: text, sql: sql, syncTables: syncTables, now: now, latestSessions: latestSessions)
        }
    }

    private func show(_ id: BetterAuthUserID, text: String, sql: UserDetailSQL, syncTables: Set<String>, now: Timestamp,
                      latestSessions: Int) throws -> UserDetail {
        let sub = id.syncSub
        var statements = [
            SQLStatement(sql.userRecord, [id.rawValue]),
            SQLStatement(sql.accountRecords, [id.rawValue]),
            SQLStatement(sql.sessionCounts, [session.encoding(.expiresAt).encode(now), id.rawValue]),
            SQLStatement(sql.latestSessions, [id.rawValue, latestSessions]),
            SQLStatement(MergeLedger.historySQL, [id.rawValue, id.rawValue]),
            SQLStatement(AppleAccountFlags.stateSQL(store.schema), [id.rawValue]),
            SQLStatement(AppleAccountFlags.deletionRequestsSQL, [id.rawValue]),
            SQLStatement(GoogleAccountFlags.stateSQL(store.schema), [id.rawValue]),
        ]
        // The sync rows, from the tables this database has (the first users row of the sub when a dirty store
        // holds two).
        var syncIndex: [String: Int] = [:]
        func sync(_ table: String, _ statement: String) {
            guard syncTables.contains(table) else { return }
            syncIndex[table] = statements.count
            statements.append(SQLStatement(statement, [sub.rawValue]))
        }
        let owner = "(SELECT id FROM users WHERE sub = ? ORDER BY id LIMIT 1)"
        if syncTables.contains("users") {
            sync("users", "SELECT id, sub, display_name, created_at FROM users WHERE sub = ? ORDER BY id LIMIT 1")
            sync("workspaces", "SELECT id, name, created_at FROM workspaces WHERE owner_id = \(owner) ORDER BY created_at, id")
            sync("subscriptions", "SELECT id, plan, status, current_period_end FROM subscriptions WHERE user_id = \(owner) ORDER BY created_at, id")
        }
        sync("allow_list", "SELECT role, granted_at FROM allow_list WHERE sub = ? ORDER BY role")

        let results = try db.snapshot(statements)
        guard let userRow = results[0].first else { throw Self.noSuchUser(text) }
        let record = userRecord(id, userRow)
        let accounts = results[1].map(accountRecord)
        let sessions = sessionOverview(counts: results[2].first, latest: results[3], now: now)
        let syncRecord = syncRecord(sub, present: syncTables) { table in syncIndex[table].map { results[$0] } ?? [] }
        let providers = Array(Set(accounts.map(\.providerId))).sorted()
        let flags = UserFlags.flags(email: record.email, emailVerified: record.emailVerified, providers: providers,
                                    provisioned: syncRecord.missingTables.contains("users") ? nil : syncRecord.provisioned)
            + AppleAccountFlags.flags(state: results[5], deletionRequests: results[6], email: record.email)
            + GoogleAccountFlags.flags(state: results[7])
        return UserDetail(user: record, flags: flags, accounts: accounts, sessions: sessions, sync: syncRecord,
                          merges: MergeLedger.history(results[4]))
    }

    private func userRecord(_ id: BetterAuthUserID, _ row: Row) -> UserRecord {
        let ban = store.schema.hasAdminPlugin
            ? BanState(banned: row.bool("banned"), reason: row.optionalString("banReason"), expires: DateEncoding.decode(row["banExpires"]))
            : nil
        return UserRecord(id: id, name: row.optionalString("name") ?? "", email: row.optionalString("email") ?? "",
                          emailVerified: row.bool("emailVerified"), image: row.optionalString("image"),
                          createdAt: DateEncoding.decode(row["createdAt"]), updatedAt: DateEncoding.decode(row["updatedAt"]),
                          role: user.has(.role) ? row.optionalString("role") : nil, ban: ban)
    }

    private func accountRecord(_ row: Row) -> AccountRecord {
        AccountRecord(id: row.optionalString("id") ?? "", providerId: row.optionalString("providerId") ?? "",
                      issuer: row.optionalString("issuer"), accountId: row.optionalString("accountId") ?? "",
                      createdAt: DateEncoding.decode(row["createdAt"]), updatedAt: DateEncoding.decode(row["updatedAt"]),
                      scope: row.optionalString("scope"),
                      accessTokenExpiresAt: DateEncoding.decode(row["accessTokenExpiresAt"]),
                      refreshTokenExpiresAt: DateEncoding.decode(row["refreshTokenExpiresAt"]),
                      hasAccessToken: row.bool("hasAccessToken"), hasRefreshToken: row.bool("hasRefreshToken"),
                      hasIdToken: row.bool("hasIdToken"), hasPassword: row.bool("hasPassword"))
    }

    private func sessionOverview(counts: Row?, latest rows: [Row], now: Timestamp) -> SessionOverview {
        SessionOverview(total: Int(counts?[0].int64 ?? 0), unexpired: Int(counts?[1].int64 ?? 0), latest: rows.map { row in
            let expires = DateEncoding.decode(row["expiresAt"])
            return SessionRecord(id: row.optionalString("id") ?? "", createdAt: DateEncoding.decode(row["createdAt"]),
                                 updatedAt: DateEncoding.decode(row["updatedAt"]), expiresAt: expires,
                                 expired: expires.map { $0 <= now } ?? false,
                                 ipAddress: row.optionalString("ipAddress"), userAgent: row.optionalString("userAgent"),
                                 impersonatedBy: row.optionalString("impersonatedBy"))
        })
    }

    /// The sync server's rows for `sub`, from `rows(table)` (empty for a table the database does not have).
    private func syncRecord(_ sub: SyncSub, present: Set<String>, rows: (String) -> [Row]) -> SyncRecord {
        let missing = SyncRecord.tables.filter { !present.contains($0) }
        let syncUser = rows("users").first.map { row in
            SyncUserRecord(id: row["id"].int64 ?? 0, sub: sub, displayName: row.optionalString("display_name"), createdAt: row.optionalString("created_at"))
        }
        let workspaces = rows("workspaces").map {
            WorkspaceRecord(id: $0.optionalString("id") ?? "", name: $0.optionalString("name") ?? "", createdAt: $0.optionalString("created_at"))
        }
        let subscriptions = rows("subscriptions").map {
            SubscriptionRecord(id: $0.optionalString("id") ?? "", plan: $0.optionalString("plan") ?? "", status: $0.optionalString("status") ?? "",
                               currentPeriodEnd: $0.optionalString("current_period_end"))
        }
        let roles = rows("allow_list").map {
            RoleRecord(role: $0.optionalString("role") ?? "", grantedAt: $0.optionalString("granted_at"))
        }
        return SyncRecord(sub: sub, provisioned: syncUser != nil, user: syncUser, workspaces: workspaces, subscriptions: subscriptions,
                          roles: roles, missingTables: missing)
    }
}

/// The SQL of `UserDirectory.show` and `resolve`, built once per schema: it depends only on the tables'
/// names and columns, and building it on every call cost more than running it. The database's statement
/// cache, keyed by this text, keeps each statement prepared. Fast path kept for ops/bench's `users show` row (< 50 ms) and the console's
/// `GET /api/users/{id}` row (≥ 5,000 req/s).
struct UserDetailSQL: Sendable {
    let exists: String
    let idByEmail: String
    let userRecord: String
    let accountRecords: String
    let sessionCounts: String
    let latestSessions: String

    init(_ schema: AuthSchema) {
        let user = schema.user, account = schema.account, session = schema.session
        func select(_ table: AuthSchema.Table, _ fields: [AuthSchema.Field]) -> [String] {
            fields.map { "\(table.col($0)) AS \(SQL.quote($0.rawValue))" }
        }
        // Presence of a secret column, computed in SQL so the value never enters the process.
        func present(_ table: AuthSchema.Table, _ field: AuthSchema.Field) -> String {
            table.has(field) ? "(\(table.col(field)) IS NOT NULL AND \(table.col(field)) <> '')" : "0"
        }
        exists = "SELECT 1 FROM \(user.sql) WHERE \(user.col(.id)) = ?"
        idByEmail = "SELECT \(user.col(.id)) FROM \(user.sql) WHERE \(user.col(.email)) = ?"
        let userFields = select(user, [.name, .email, .emailVerified, .image, .createdAt, .updatedAt, .role, .banned, .banReason, .banExpires])
        userRecord = "SELECT \(userFields.joined(separator: ", ")) FROM \(user.sql) WHERE \(user.col(.id)) = ?"
        var accountFields = select(account, [.id, .providerId, .issuer, .accountId, .createdAt, .updatedAt, .scope,
                                             .accessTokenExpiresAt, .refreshTokenExpiresAt])
        accountFields += [(AuthSchema.Field.accessToken, "hasAccessToken"), (.refreshToken, "hasRefreshToken"), (.idToken, "hasIdToken"), (.password, "hasPassword")]
            .map { "\(present(account, $0.0)) AS \(SQL.quote($0.1))" }
        accountRecords = "SELECT \(accountFields.joined(separator: ", ")) FROM \(account.sql) WHERE \(account.col(.userId)) = ?"
            + " ORDER BY \(account.col(.createdAt)), \(account.col(.id))"
        let userId = session.col(.userId)
        sessionCounts = "SELECT count(*), coalesce(sum(CASE WHEN \(session.col(.expiresAt)) > ? THEN 1 ELSE 0 END), 0) FROM \(session.sql) WHERE \(userId) = ?"
        let sessionFields = select(session, [.id, .createdAt, .updatedAt, .expiresAt, .ipAddress, .userAgent, .impersonatedBy])
        latestSessions = "SELECT \(sessionFields.joined(separator: ", ")) FROM \(session.sql) WHERE \(userId) = ?"
            + " ORDER BY \(session.col(.createdAt)) DESC, \(session.col(.id)) LIMIT ?"
    }

    /// What the SQL depends on; two stores of one shape share their SQL.
    private struct Shape: Equatable {
        let user: String, account: String, session: String
        let userColumns: [AuthSchema.Field: String], accountColumns: [AuthSchema.Field: String], sessionColumns: [AuthSchema.Field: String]

        init(_ schema: AuthSchema) {
            user = schema.user.name
            account = schema.account.name
            session = schema.session.name
            userColumns = schema.user.columns
            accountColumns = schema.account.columns
            sessionColumns = schema.session.columns
        }
    }

    private static let cache = Locked<[(shape: Shape, sql: UserDetailSQL)]>([])

    /// The SQL for `schema`, built on first use of its shape.
    static func `for`(_ schema: AuthSchema) -> UserDetailSQL {
        let shape = Shape(schema)
        if let found = cache.withLock({ entries in entries.first { $0.shape == shape }?.sql }) { return found }
        let sql = UserDetailSQL(schema)
        cache.withLock { entries in
            // A process opens stores of one or two shapes; the bound only guards against a pathological caller.
            if entries.count >= 16 { entries.removeFirst() }
            entries.append((shape, sql))
        }
        return sql
    }
}
