import Storage

/// One page of a user search in a total order (`UserSort`, then id), starting after a cursor: keyset paging, never
/// `OFFSET`, so page 10,000 costs what page 1 costs and a user added meanwhile neither repeats nor hides another.
///
/// Two plans give the same page:
/// - *candidates*: when the matching users are known and few (an exact id, sub or account; a name the name index
///   finds fewer than `maxCandidates` of), the store sorts just those, after the cursor, with the filters;
/// - *ordered scan*: otherwise the user table is read in the sort's order from the cursor (an index: `AccountIndexes`),
///   filters and an email substring applied by the store (`LIKE` with every wildcard escaped), a name matching many
///   users compared here after normalisation, until the page is full. A query that matches many users fills a page
///   early. An email part that matches few users reads every email (ops/bench's `search` rows: ~0.1 s at 1,000,000
///   users on SQLite); a domain query, the one support staff run, matches many. No trigram index on emails: with
///   pg_trgm's, Postgres read a common part through it and sorted the matches (29 ms a page instead of 19 at 100,000
///   users, and growing with the matches).
struct UserSearchPager {
    let db: SQLDatabase
    let schema: AuthSchema

    /// Candidates beyond which the ordered scan is the cheaper plan (and below which the store sorts them at once).
    static let maxCandidates = 2000
    /// Ids bound in one statement: D1 takes at most 100 parameters.
    var maxBound: Int { min(db.dialect.maxBoundParameters ?? Self.maxCandidates, Self.maxCandidates) }

    private var user: AuthSchema.Table { schema.user }

    struct Page {
        var found: [(id: BetterAuthUserID, kind: UserQueryKind)]
        var next: UserSearchCursor?
    }

    /// What a row must hold beyond the store's conditions: nil when the store's conditions say all.
    enum Match {
        case name(needle: [UInt8])
        case emailOrName(email: [UInt8], name: [UInt8])
    }

    // MARK: - plans

    /// The page of `kinds` matching `query`.
    func page(query: String, kinds: [UserQueryKind], sort: UserSort, after: UserSearchCursor?, filters: UserSearchFilters,
              limit: Int, exactIDs: (UserQueryKind) throws -> [BetterAuthUserID]) throws -> Page {
        let exact = kinds.filter { $0 != .email && $0 != .name }
        if !exact.isEmpty {
            var kindOf: [BetterAuthUserID: UserQueryKind] = [:]
            var ids: [BetterAuthUserID] = []
            for kind in exact { for id in try exactIDs(kind) where kindOf[id] == nil { kindOf[id] = kind; ids.append(id) } }
            return try candidates(ids, kind: { kindOf[$0] ?? .id }, sort: sort, after: after, filters: filters, limit: limit, extra: nil)
        }
        var normalizer = NameNormalizer()
        let emailNeedle = Array(JavaScriptString.toLowerCase(query).utf8)
        let nameNeedle = normalizer.bytes(query)
        // Case aside on every engine, the column bare (`SQLDialect.likeIgnoringCase`).
        let like = db.dialect.likeIgnoringCase
        let emailCondition = Condition("\(col(.email)) \(like) ? ESCAPE '\\'", [.text(Self.likePattern(JavaScriptString.toLowerCase(query)))])
        let room = min(Self.maxCandidates, maxBound)
        switch (kinds.contains(.email), kinds.contains(.name)) {
        case (true, false):
            if sort == .match { return try startFirst(query, contains: emailCondition, after: after, filters: filters, limit: limit) }
            return try scan(sort: sort, after: after, filters: filters, limit: limit, extra: emailCondition, match: nil) { _ in .email }
        case (false, true):
            guard !nameNeedle.isEmpty else { return Page(found: [], next: nil) }
            let found = try NameSearch(db: db, schema: schema).ids(matching: query, limit: room + 1).ids
            if found.count <= room {
                return try candidates(found, kind: { _ in .name }, sort: sort, after: after, filters: filters, limit: limit, extra: nil)
            }
            return try scan(sort: sort, after: after, filters: filters, limit: limit, extra: nil, match: .name(needle: nameNeedle)) { _ in .name }
        default:
            // Matched by email, else by name. Names the index finds few of join the store's condition; a name matching
            // many users is compared here, and fills the page early.
            let byName = nameNeedle.isEmpty ? [] : try NameSearch(db: db, schema: schema).ids(matching: query, limit: room + 1).ids
            let kind: (Row) -> UserQueryKind = { row in
                NameSearch.contains(Array(JavaScriptString.toLowerCase(row[3].string ?? "").utf8), emailNeedle) ? .email : .name
            }
            if byName.count <= room {
                let either = byName.isEmpty ? emailCondition : Condition(
                    "(\(emailCondition.sql) OR \(col(.id)) IN (\(byName.map { _ in "?" }.joined(separator: ", "))))",
                    emailCondition.arguments + byName.map { .text($0.rawValue) })
                return try scan(sort: sort, after: after, filters: filters, limit: limit, extra: either, match: nil, kind: kind)
            }
            return try scan(sort: sort, after: after, filters: filters, limit: limit, extra: nil,
                            match: .emailOrName(email: emailNeedle, name: nameNeedle), kind: kind)
        }
    }

    /// The `match` order: the addresses starting with the query (one range of the email index), then the ones holding
    /// it further in (the ordered scan, the range left out), each in email order. An address with capitals that starts
    /// with the query is in the second part (the range compares bytes; Better Auth stores emails in lower case).
    private func startFirst(_ query: String, contains: Condition, after: UserSearchCursor?, filters: UserSearchFilters,
                            limit: Int) throws -> Page {
        let start = JavaScriptString.toLowerCase(query)
        let key = db.dialect.byteOrdered(col(.email))
        let bounds: [SQLValue] = [.text(start), .text(start + "\u{10FFFF}")]
        let within = Condition("\(key) >= ? AND \(key) < ?", bounds)
        let further = Condition("\(contains.sql) AND NOT (\(key) >= ? AND \(key) < ?)", contains.arguments + bounds)
        var rows: [(Row, Bool)] = []
        if after?.further != true {
            rows = try fetch(sort: .match, after: after, filters: filters, conditions: [within], count: limit + 1).map { ($0, false) }
        }
        if rows.count <= limit {
            let rest = try fetch(sort: .match, after: after?.further == true ? after : nil, filters: filters, conditions: [further],
                                 count: limit + 1 - rows.count)
            rows += rest.map { ($0, true) }
        }
        let page = rows.prefix(limit)
        let next = rows.count > limit ? page.last.map { last -> UserSearchCursor in
            var next = cursor(last.0, sort: .match)
            next.further = last.1
            return next
        } : nil
        return Page(found: page.map { (BetterAuthUserID($0.0[0].string ?? ""), .email) }, next: next)
    }

    /// The known users, sorted by the store after the cursor and filtered.
    private func candidates(_ ids: [BetterAuthUserID], kind: (BetterAuthUserID) -> UserQueryKind, sort: UserSort, after: UserSearchCursor?,
                            filters: UserSearchFilters, limit: Int, extra: Condition?) throws -> Page {
        guard !ids.isEmpty else { return Page(found: [], next: nil) }
        var rows: [Row] = []
        // Within one statement the store sorts; across statements (D1's parameter limit) the pages are merged here.
        for chunk in stride(from: 0, to: ids.count, by: maxBound).map({ Array(ids[$0..<min($0 + maxBound, ids.count)]) }) {
            let within = Condition("\(col(.id)) IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))", chunk.map { SQLValue.text($0.rawValue) })
            rows += try fetch(sort: sort, after: after, filters: filters, conditions: [within] + (extra.map { [$0] } ?? []), count: limit + 1)
        }
        if ids.count > maxBound { rows.sort { precedes($0, $1, sort: sort) }; rows = Array(rows.prefix(limit + 1)) }
        return finish(rows.map { ($0, kind(BetterAuthUserID($0[0].string ?? ""))) }, sort: sort, limit: limit)
    }

    /// The user table in the sort's order from the cursor, until the page is full.
    private func scan(sort: UserSort, after: UserSearchCursor?, filters: UserSearchFilters, limit: Int, extra: Condition?,
                      match: Match?, kind: (Row) -> UserQueryKind) throws -> Page {
        guard let match else {
            let rows = try fetch(sort: sort, after: after, filters: filters, conditions: extra.map { [$0] } ?? [], count: limit + 1)
            return finish(rows.map { ($0, kind($0)) }, sort: sort, limit: limit)
        }
        var normalizer = NameNormalizer()
        var accepted: [(Row, UserQueryKind)] = []
        var position = after
        var batch = max(limit + 1, 500)
        while accepted.count <= limit {
            let rows = try fetch(sort: sort, after: position, filters: filters, conditions: extra.map { [$0] } ?? [], count: batch)
            for row in rows {
                position = cursor(row, sort: sort)
                if matches(row, match, normalizer: &normalizer) {
                    accepted.append((row, kind(row)))
                    if accepted.count > limit { break }
                }
            }
            if rows.count < batch { break }
            batch = min(batch * 4, 20_000)
        }
        return finish(accepted, sort: sort, limit: limit)
    }

    private func matches(_ row: Row, _ match: Match, normalizer: inout NameNormalizer) -> Bool {
        func email() -> [UInt8] { Array(JavaScriptString.toLowerCase(row[3].string ?? "").utf8) }
        func name() -> [UInt8] { normalizer.bytes(row[2].string ?? "") }
        switch match {
        case .name(let needle): return !needle.isEmpty && NameSearch.contains(name(), needle)
        case .emailOrName(let byEmail, let byName):
            return NameSearch.contains(email(), byEmail) || (!byName.isEmpty && NameSearch.contains(name(), byName))
        }
    }

    private func finish(_ rows: [(Row, UserQueryKind)], sort: UserSort, limit: Int) -> Page {
        let page = rows.prefix(limit)
        let next = rows.count > limit ? page.last.map { cursor($0.0, sort: sort) } : nil
        return Page(found: page.map { (BetterAuthUserID($0.0[0].string ?? ""), $0.1) }, next: next)
    }

    // MARK: - SQL

    /// A piece of a `WHERE` clause and its arguments.
    struct Condition {
        let sql: String
        let arguments: [SQLValue]
        init(_ sql: String, _ arguments: [SQLValue] = []) {
            self.sql = sql
            self.arguments = arguments
        }
    }

    private func col(_ field: AuthSchema.Field) -> String { "u.\(user.col(field))" }

    /// The sort's key, as the statement orders by it.
    private func key(_ sort: UserSort) -> String {
        switch sort {
        case .name: return db.dialect.byteOrdered(col(.name))
        case .email, .match: return db.dialect.byteOrdered(col(.email))
        case .created: return col(.createdAt)
        case .lastSignIn:
            let session = schema.session
            return "(SELECT max(s.\(session.col(.createdAt))) FROM \(session.sql) s WHERE s.\(session.col(.userId)) = \(col(.id)))"
        }
    }

    /// The cursor's key as the store compares it: a time in the column's own encoding.
    private func bound(_ cursor: UserSearchCursor) -> SQLValue {
        guard cursor.sort.byDate, case .integer(let milliseconds) = cursor.key else { return cursor.key }
        let encoding = cursor.sort == .created ? user.encoding(.createdAt) : schema.session.encoding(.createdAt)
        return encoding.encode(Timestamp(milliseconds: milliseconds))
    }

    /// The row's place in the order, as a cursor.
    private func cursor(_ row: Row, sort: UserSort) -> UserSearchCursor {
        let key: SQLValue = sort.byDate ? DateEncoding.decode(row[1]).map { .integer($0.milliseconds) } ?? .null : .text(row[1].string ?? "")
        return UserSearchCursor(sort: sort, key: key, id: row[0].string ?? "")
    }

    /// Whether `a` comes before `b` in the sort's order, for merging statements' pages on D1 (SQLite's byte order).
    private func precedes(_ a: Row, _ b: Row, sort: UserSort) -> Bool {
        let (ka, kb) = (cursor(a, sort: sort), cursor(b, sort: sort))
        func less(_ x: SQLValue, _ y: SQLValue) -> Bool? {
            switch (x, y) {
            case (.integer(let l), .integer(let r)): return l == r ? nil : l < r
            case (.text(let l), .text(let r)): return l == r ? nil : Array(l.utf8).lexicographicallyPrecedes(Array(r.utf8))
            default: return nil
            }
        }
        switch (ka.key, kb.key) {
        case (.null, .null): break
        case (.null, _): return false
        case (_, .null): return true
        default: if let order = less(ka.key, kb.key) { return sort.descending ? !order : order }
        }
        guard ka.id != kb.id else { return false }
        let ids = Array(ka.id.utf8).lexicographicallyPrecedes(Array(kb.id.utf8))
        return sort.descending ? !ids : ids
    }

    /// The rows (id, key, name, email) after `after` in the sort's order, matching every condition, at most `count`.
    private func fetch(sort: UserSort, after: UserSearchCursor?, filters: UserSearchFilters, conditions: [Condition], count: Int) throws -> [Row] {
        let key = key(sort), id = col(.id)
        var all = conditions + (try filterConditions(filters))
        let order: String
        switch sort {
        // The key's own bound too: the sort's index holds the key alone, and a row value starts no index range there.
        case .name, .email, .match:
            order = "\(key), \(id)"
            if let after {
                let value = bound(after)
                all.append(Condition("\(key) >= ? AND (\(key), \(id)) > (?, ?)", [value, value, .text(after.id)]))
            }
        case .created:
            order = "\(key) DESC, \(id) DESC"
            if let after {
                let value = bound(after)
                all.append(Condition("\(key) <= ? AND (\(key), \(id)) < (?, ?)", [value, value, .text(after.id)]))
            }
        case .lastSignIn:
            // Users who never signed in (no session: a null key) come last, by id.
            order = "(\(key) IS NULL), \(key) DESC, \(id) DESC"
            if let after {
                if case .null = after.key {
                    all.append(Condition("(\(key) IS NULL AND \(id) < ?)", [.text(after.id)]))
                } else {
                    let value = bound(after)
                    all.append(Condition("(\(key) IS NULL OR \(key) < ? OR (\(key) = ? AND \(id) < ?))", [value, value, .text(after.id)]))
                }
            }
        }
        let whereClause = all.isEmpty ? "" : " WHERE " + all.map(\.sql).joined(separator: " AND ")
        let sql = "SELECT \(col(.id)), \(key), \(col(.name)), \(col(.email)) FROM \(user.sql) u\(whereClause) ORDER BY \(order) LIMIT ?"
        return try db.rows(sql, all.flatMap(\.arguments) + [SQLValue.integer(Int64(count))])
    }

    /// The filters as conditions on the user row `u`.
    func filterConditions(_ filters: UserSearchFilters) throws -> [Condition] {
        let account = schema.account
        var out: [Condition] = []
        func hasAccount(_ alias: String, of userID: String, extra: String = "") -> String {
            "EXISTS (SELECT 1 FROM \(account.sql) \(alias) WHERE \(alias).\(account.col(.userId)) = \(userID)\(extra))"
        }
        if let provider = filters.provider {
            out.append(Condition(hasAccount("a", of: col(.id), extra: " AND a.\(account.col(.providerId)) = ?"), [.text(provider)]))
        }
        if let after = filters.createdAfter { out.append(Condition("\(col(.createdAt)) >= ?", [user.encoding(.createdAt).encode(after)])) }
        if let before = filters.createdBefore { out.append(Condition("\(col(.createdAt)) < ?", [user.encoding(.createdAt).encode(before)])) }
        for flag in filters.flags {
            switch flag {
            case .relay:
                let domains = EmailAddress.relayDomains.sorted()
                out.append(Condition("(" + domains.map { _ in "\(col(.email)) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
                                     domains.map { .text("%" + Self.escapeLike("@" + $0)) }))
            case .googleDisabled:
                guard try db.tableExists("gatehouse_google_account_state") else { out.append(Condition("1 = 0")); continue }
                out.append(Condition("EXISTS (SELECT 1 FROM \(account.sql) g JOIN gatehouse_google_account_state gs ON gs.sub = g.\(account.col(.accountId))"
                    + " WHERE g.\(account.col(.userId)) = \(col(.id)) AND g.\(account.col(.providerId)) = 'google' AND gs.disabled IS NOT NULL)"))
            case .deletionPending:
                guard try db.tableExists("gatehouse_apple_deletion_requests") else { out.append(Condition("1 = 0")); continue }
                out.append(Condition("EXISTS (SELECT 1 FROM gatehouse_apple_deletion_requests dr WHERE dr.user_id = \(col(.id)) AND dr.state = 'open')"))
            case .splitIdentity:
                // A twin: another user of the same (non-empty) name with a provider this user has no account of.
                let name = db.dialect.byteOrdered(col(.name)), twinName = db.dialect.byteOrdered("t.\(user.col(.name))")
                out.append(Condition("\(col(.name)) <> '' AND EXISTS (SELECT 1 FROM \(user.sql) t WHERE \(twinName) = \(name)"
                    + " AND t.\(user.col(.id)) <> \(col(.id)) AND EXISTS (SELECT 1 FROM \(account.sql) b WHERE b.\(account.col(.userId)) = t.\(user.col(.id))"
                    + " AND NOT \(hasAccount("c", of: col(.id), extra: " AND c.\(account.col(.providerId)) = b.\(account.col(.providerId))"))))"))
            }
        }
        return out
    }

    /// `text` with LIKE's wildcards and its escape character escaped (`ESCAPE '\'`): every character matches itself.
    static func escapeLike(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// The LIKE pattern of "contains `text`".
    static func likePattern(_ text: String) -> String { "%" + escapeLike(text) + "%" }
}
