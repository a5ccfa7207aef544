import Gatehouse
import Storage

/// Name search's index on SQLite: an FTS5 trigram index over every user's normalized name (`NameNormalizer`), so that
/// a substring search reads the few matching rows instead of every name (`UserSearchIndex` says what it promises).
///
/// Four `gatehouse_` tables, none on Better Auth's side of the schema:
/// - `gatehouse_user_search_names` (doc, user_id, key): the normalized name of each user when last indexed, under
///   the user's rowid, so FTS5 (which yields rowids in order) gives matches in the order a scan meets them and a
///   search stops at its limit;
/// - `gatehouse_user_search`: FTS5 over `key` (external content, trigram, case-sensitive: keys are already folded);
/// - `gatehouse_user_search_pending` (user_id): users inserted, renamed or deleted since;
/// - `gatehouse_user_search_terms` (term): every trigram indexed, for needles of one or two characters.
///
/// The triggers on the user table only record *which* user changed, with plain SQL that cannot fail or conflict (and
/// needs no FTS5 in Better Auth's SQLite). Created from the schema map, like `AccountIndexes`: the user table may be
/// renamed and its columns are camelCase or snake_case, so the triggers cannot be a static migration. Without SQLite's
/// FTS5 trigram tokenizer (SQLite < 3.34, or built without FTS5) there is no index and name search keeps its scan.
///
/// A search (`ids(matching:)`): the trigram index finds the first indexed matches (a query of one or two characters,
/// which has no trigram, reads the first keys, then the trigrams holding it from the terms table and the keys shorter
/// than a trigram), and the pending users are read and compared directly. Kept for ops/bench's
/// `users_search_name_*` rows (few matches among 1,000,000 users in < 20 ms).
struct SQLiteNameIndex: NameIndex {
    let db: SQLiteDatabase

    /// The partial index of the keys shorter than a trigram (which FTS5 cannot find).
    static let shortKeysIndex = "gatehouse_user_search_names_short"

    static let unavailableReason = "this SQLite has no FTS5 trigram tokenizer (it needs 3.34 or later, built with FTS5): name search scans the user table"
    static let rowlessReason = "the user table is WITHOUT ROWID: name search scans it"

    /// Trigrams holding a short needle beyond which `shortThroughTerms` leaves it to the keys' scan (a needle
    /// that common matches many users early in rowid order, and the scan stops at the limit).
    static var maxTerms: Int { NameSearch.maxTerms }

    // MARK: - SQL

    /// The SQL that depends on the user table's name and columns.
    struct Statements {
        let rowid: String
        let triggers: [(name: String, sql: String)]
        /// Indexed users matching an FTS query that are not pending, in rowid order, the first `?`: (doc = rowid, id).
        let matches: String
        /// `matches` for a needle too short for trigrams: a scan of the keys in rowid order, in SQLite's C.
        let shortMatches: String
        /// `shortMatches` among the keys with doc ≤ the second `?`.
        let shortMatchesBelow: String
        /// `matches` with the key, for an FTS query: (doc, id, key).
        let matchesWithKey: String
        /// Indexed keys shorter than a trigram containing `?` that are not pending, in rowid order: (doc, id, key).
        let shortKeys: String
        /// Pending users that still exist: (rowid, id, name).
        let pendingUsers: String
        /// Every user in rowid order: (rowid, id, name).
        let everyUser: String
        /// One user's rowid and name by id.
        let userByID: String
        /// The indexed user with the highest doc that is not pending, and its rowid now (NULL when it is gone).
        let lastIndexed: String

        init(_ user: AuthSchema.Table, rowid: String) {
            self.rowid = rowid
            let id = user.col(.id), name = user.col(.name), pending = SQL.quote(UserSearchIndex.pendingTable)
            // No OR IGNORE: an outer INSERT OR ABORT would turn a conflict here into a failure of Better Auth's write.
            func mark(_ row: String) -> String {
                "INSERT INTO \(pending) (user_id) SELECT \(row).\(id) WHERE \(row).\(id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(pending) WHERE user_id = \(row).\(id));"
            }
            triggers = [
                (UserSearchIndex.insertTrigger, "CREATE TRIGGER \(SQL.quote(UserSearchIndex.insertTrigger)) AFTER INSERT ON \(user.sql) BEGIN \(mark("NEW")) END"),
                (UserSearchIndex.updateTrigger, "CREATE TRIGGER \(SQL.quote(UserSearchIndex.updateTrigger)) AFTER UPDATE OF \(name), \(id) ON \(user.sql) BEGIN \(mark("OLD")) \(mark("NEW")) END"),
                (UserSearchIndex.deleteTrigger, "CREATE TRIGGER \(SQL.quote(UserSearchIndex.deleteTrigger)) AFTER DELETE ON \(user.sql) BEGIN \(mark("OLD")) END"),
            ]
            let fts = SQL.quote(UserSearchIndex.table), names = SQL.quote(UserSearchIndex.namesTable)
            // FTS5 yields rowids in ascending order, so LIMIT stops the phrase walk at the first matches.
            matches = """
                SELECT n.doc, n.user_id FROM \(fts) JOIN \(names) n ON n.doc = \(fts).rowid
                WHERE \(fts) MATCH ? AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id)
                ORDER BY \(fts).rowid LIMIT ?
                """
            shortMatches = """
                SELECT n.doc, n.user_id FROM \(names) n
                WHERE instr(n.key, ?) > 0 AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id)
                ORDER BY n.doc LIMIT ?
                """
            shortMatchesBelow = """
                SELECT n.doc, n.user_id FROM \(names) n
                WHERE n.doc <= ?2 AND instr(n.key, ?1) > 0 AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id)
                ORDER BY n.doc LIMIT ?3
                """
            matchesWithKey = """
                SELECT n.doc, n.user_id, n.key FROM \(fts) JOIN \(names) n ON n.doc = \(fts).rowid
                WHERE \(fts) MATCH ? AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id)
                ORDER BY \(fts).rowid LIMIT ?
                """
            // `length(key) < 3` as written in the partial index, so SQLite reads it and not the table.
            shortKeys = """
                SELECT n.doc, n.user_id, n.key FROM \(names) n
                WHERE length(n.key) < 3 AND instr(n.key, ?) > 0 AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id)
                ORDER BY n.doc LIMIT ?
                """
            pendingUsers = "SELECT u.\(rowid), u.\(id), u.\(name) FROM \(pending) p JOIN \(user.sql) u ON u.\(id) = p.user_id"
            everyUser = "SELECT \(rowid), \(id), \(name) FROM \(user.sql) ORDER BY \(rowid)"
            userByID = "SELECT \(rowid), \(name) FROM \(user.sql) WHERE \(id) = ?"
            lastIndexed = """
                SELECT n.doc, (SELECT u.\(rowid) FROM \(user.sql) u WHERE u.\(id) = n.user_id) FROM \(names) n
                WHERE NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = n.user_id) ORDER BY n.doc DESC LIMIT 1
                """
        }
    }

    /// A name for the user table's rowid that no column shadows; nil for a `WITHOUT ROWID` table.
    func rowidName(_ table: AuthSchema.Table) throws -> String? {
        let columns = Set(try db.columns(of: table.name).map { $0.name.lowercased() })
        guard let free = ["rowid", "_rowid_", "oid"].first(where: { !columns.contains($0) }) else { return nil }
        do {
            _ = try db.statement("SELECT \(free) FROM \(table.sql) LIMIT 0")
            return free
        } catch is DatabaseError {
            return nil
        }
    }

    func sql(_ schema: AuthSchema) throws -> Statements? {
        try rowidName(schema.user).map { Statements(schema.user, rowid: $0) }
    }

    /// Whether this SQLite has FTS5 with the trigram tokenizer (3.34+), tried on a temporary table.
    func trigramAvailable() -> Bool {
        do {
            try db.execute("CREATE VIRTUAL TABLE temp.gatehouse_trigram_probe USING fts5(x, tokenize = 'trigram case_sensitive 1')")
            try db.execute("DROP TABLE temp.gatehouse_trigram_probe")
            return true
        } catch {
            return false
        }
    }

    // MARK: - status

    func status(schema: AuthSchema) throws -> UserSearchIndex.Status {
        let objects = try schemaObjects()
        guard objects[UserSearchIndex.table] != nil, objects[UserSearchIndex.namesTable] != nil, objects[UserSearchIndex.pendingTable] != nil else {
            guard try sql(schema) != nil else { return UserSearchIndex.Status(state: .unsupported, pending: 0, reason: Self.rowlessReason) }
            // Probing needs the temp schema, which a read-only connection still has.
            return trigramAvailable() ? UserSearchIndex.Status(state: .absent, pending: 0, reason: nil)
                : UserSearchIndex.Status(state: .unsupported, pending: 0, reason: Self.unavailableReason)
        }
        let pending = try pendingCount()
        guard let sql = try sql(schema) else { return UserSearchIndex.Status(state: .stale, pending: pending, reason: Self.rowlessReason) }
        if let problem = try triggerProblem(objects, sql) ?? alignmentProblem(sql) {
            return UserSearchIndex.Status(state: .stale, pending: pending, reason: problem)
        }
        return UserSearchIndex.Status(state: .current, pending: pending, reason: nil)
    }

    /// The SQL to search through the index when it can be trusted (built, every trigger as made); nil otherwise.
    /// Reads the schema only, so it is cheap enough for every search. `terms`: the trigram list and the short
    /// keys' index are there (an index built before them has neither until `accounts index` builds it again).
    func searchable(_ schema: AuthSchema) throws -> (sql: Statements, terms: Bool)? {
        let objects = try schemaObjects()
        guard objects[UserSearchIndex.table] != nil, objects[UserSearchIndex.namesTable] != nil, objects[UserSearchIndex.pendingTable] != nil,
              let sql = try sql(schema), triggerProblem(objects, sql) == nil, try alignmentProblem(sql) == nil else { return nil }
        return (sql, objects[UserSearchIndex.termsTable] != nil && objects[Self.shortKeysIndex] != nil)
    }

    /// Whether the index lacks the trigram list or the short keys' index (built before them).
    func lacksParts() throws -> Bool {
        let objects = try schemaObjects()
        return objects[UserSearchIndex.table] != nil && (objects[UserSearchIndex.termsTable] == nil || objects[Self.shortKeysIndex] == nil)
    }

    /// The trigrams of a key as FTS5's trigram tokenizer makes them (every three consecutive Unicode scalars).
    static func trigrams(_ key: String) -> [String] {
        let scalars = Array(key.unicodeScalars)
        guard scalars.count >= 3 else { return [] }
        return (0...(scalars.count - 3)).map { start in
            var term = String.UnicodeScalarView()
            term.append(contentsOf: scalars[start..<(start + 3)])
            return String(term)
        }
    }

    func pendingCount() throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM \(SQL.quote(UserSearchIndex.pendingTable))").int64 ?? 0)
    }

    /// The index's tables and triggers that exist: name → SQL.
    func schemaObjects() throws -> [String: String] {
        Dictionary(try db.rows("SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?, ?, ?, ?, ?)",
                               [UserSearchIndex.table, UserSearchIndex.namesTable, UserSearchIndex.pendingTable, UserSearchIndex.insertTrigger,
                                UserSearchIndex.updateTrigger, UserSearchIndex.deleteTrigger, UserSearchIndex.termsTable, Self.shortKeysIndex])
            .map { ($0[0].string ?? "", $0[1].string ?? "") }) { first, _ in first }
    }

    /// Each indexed user's doc is its rowid when it was indexed, and a search relies on it still being so (results
    /// come in doc order). Rowids change only when the table is copied or restored (`.dump`, `.recover`), which
    /// renumbers the rows in order: any gap below the last indexed user moves that user, so checking it is enough.
    private func alignmentProblem(_ sql: Statements) throws -> String? {
        guard let last = try db.row(sql.lastIndexed) else { return nil }
        if last[1].isNull { return "an indexed user was deleted without the delete trigger recording it" }
        return last[0].int64 == last[1].int64 ? nil : "the user table's rowids changed since it was indexed; was the store restored from a dump?"
    }

    private func triggerProblem(_ objects: [String: String], _ sql: Statements) -> String? {
        for trigger in sql.triggers where objects[trigger.name] != trigger.sql {
            return objects[trigger.name] == nil ? "the trigger \(trigger.name) on the user table is missing; was the table recreated?"
                : "the trigger \(trigger.name) was made for other columns or another table"
        }
        return nil
    }

    // MARK: - building

    func ensure(schema: AuthSchema, rebuild: Bool) throws -> UserSearchIndex.Change {
        // Checked before taking the write lock: on an up-to-date store this writes nothing.
        let before = try status(schema: schema)
        if before.state == .unsupported { return .unsupported(before.reason ?? Self.unavailableReason) }
        let lacking = try lacksParts()
        if before.state == .current && before.pending == 0 && !rebuild && !lacking { return .unchanged }
        return try db.write {
            let now = try status(schema: schema)
            guard let sql = try sql(schema) else { return .unsupported(Self.rowlessReason) }
            let lacksTerms = try lacksParts()
            switch now.state {
            case .unsupported: return .unsupported(now.reason ?? Self.unavailableReason)
            case .absent, .stale: return .built(users: try build(sql))
            case .current where rebuild || lacksTerms: return .built(users: try build(sql))
            case .current:
                guard now.pending > 0 else { return .unchanged }
                let users = try db.scalar("SELECT count(*) FROM \(SQL.quote(UserSearchIndex.namesTable))").int64 ?? 0
                if Int64(now.pending) * Int64(UserSearchIndex.rebuildFraction) > users { return .built(users: try build(sql)) }
                return .folded(users: try fold(sql))
            }
        }
    }

    func drop(schema: AuthSchema) throws {
        try dropAll()
    }

    private func dropAll() throws {
        try db.write {
            for trigger in [UserSearchIndex.insertTrigger, UserSearchIndex.updateTrigger, UserSearchIndex.deleteTrigger] {
                try db.execute("DROP TRIGGER IF EXISTS \(SQL.quote(trigger))")
            }
            for name in [UserSearchIndex.table, UserSearchIndex.namesTable, UserSearchIndex.pendingTable, UserSearchIndex.termsTable] {
                try db.execute("DROP TABLE IF EXISTS \(SQL.quote(name))")
            }
        }
    }

    /// Builds everything from scratch inside the caller's write transaction; returns the users with a name key.
    private func build(_ sql: Statements) throws -> Int {
        try dropAll()
        let table = SQL.quote(UserSearchIndex.table)
        let names = SQL.quote(UserSearchIndex.namesTable), pending = SQL.quote(UserSearchIndex.pendingTable)
        try db.execute("CREATE TABLE \(pending) (user_id TEXT PRIMARY KEY) WITHOUT ROWID")
        try db.execute("CREATE TABLE \(names) (doc INTEGER PRIMARY KEY, user_id TEXT NOT NULL, key TEXT NOT NULL)")
        try db.execute("CREATE VIRTUAL TABLE \(table) USING fts5(key, content = \(names), content_rowid = 'doc', tokenize = 'trigram case_sensitive 1')")
        for trigger in sql.triggers { try db.execute(trigger.sql) }
        var normalizer = NameNormalizer()
        let insert = try db.statement("INSERT INTO \(names) (doc, user_id, key) VALUES (?, ?, ?)")
        var count = 0
        // The same reading of each row as the scan: a name that is not text is skipped.
        let users = try db.statement(sql.everyUser)
        try users.bind([])
        defer { users.reset() }
        while try users.step() {
            guard let rowid = users.value(at: 0).int64, let name = users.value(at: 2).string, let id = users.value(at: 1).string else { continue }
            let key = normalizer.bytes(name)
            guard !key.isEmpty else { continue }
            try insert.execute([.integer(rowid), .text(id), .text(String(decoding: key, as: UTF8.self))])
            count += 1
        }
        try db.execute("CREATE INDEX \(SQL.quote(UserSearchIndex.namesTable + "_user_id")) ON \(names) (user_id)")
        try db.execute("CREATE INDEX \(SQL.quote(Self.shortKeysIndex)) ON \(names) (doc) WHERE length(key) < 3")
        try db.execute("INSERT INTO \(table) (\(table)) VALUES ('rebuild')")
        // FTS5's own vocabulary, read once here (reading it counts every doclist: seconds on a million users).
        let terms = SQL.quote(UserSearchIndex.termsTable), vocabulary = "temp.gatehouse_user_search_vocabulary"
        try db.execute("CREATE TABLE \(terms) (term TEXT PRIMARY KEY) WITHOUT ROWID")
        try db.execute("DROP TABLE IF EXISTS \(vocabulary)")
        try db.execute("CREATE VIRTUAL TABLE \(vocabulary) USING fts5vocab(main, \(table), 'row')")
        try db.execute("INSERT INTO \(terms) (term) SELECT term FROM \(vocabulary)")
        try db.execute("DROP TABLE \(vocabulary)")
        return count
    }

    /// Re-reads each pending user into the index; returns how many were pending. Every pending user's old entry
    /// goes first, then the current ones: a deleted user's rowid may have been reused by a new user.
    private func fold(_ sql: Statements) throws -> Int {
        let fts = SQL.quote(UserSearchIndex.table), names = SQL.quote(UserSearchIndex.namesTable)
        let pending = SQL.quote(UserSearchIndex.pendingTable)
        var normalizer = NameNormalizer()
        let ids = try db.rows("SELECT user_id FROM \(pending)").compactMap { $0[0].string }
        for id in ids {
            for old in try db.rows("SELECT doc, key FROM \(names) WHERE user_id = ?", [id]) {
                try db.execute("INSERT INTO \(fts) (\(fts), rowid, key) VALUES ('delete', ?, ?)", [old[0], old[1]])
                try db.execute("DELETE FROM \(names) WHERE doc = ?", [old[0]])
            }
        }
        for id in ids {
            // A renamed id is pending under both ids; a deleted user has no row left.
            guard let row = try db.row(sql.userByID, [id]), let rowid = row[0].int64, let name = row[1].string else { continue }
            let key = normalizer.bytes(name)
            guard !key.isEmpty else { continue }
            let text = String(decoding: key, as: UTF8.self)
            try db.execute("INSERT INTO \(names) (doc, user_id, key) VALUES (?, ?, ?)", [rowid, id, text])
            try db.execute("INSERT INTO \(fts) (rowid, key) VALUES (?, ?)", [rowid, text])
            for term in Self.trigrams(text) { try db.execute("INSERT OR IGNORE INTO \(SQL.quote(UserSearchIndex.termsTable)) (term) VALUES (?)", [term]) }
        }
        try db.execute("DELETE FROM \(pending)")
        return ids.count
    }

    // MARK: - search

    /// Through the index; nil when it cannot answer (absent, stale, too far behind). The first `limit` indexed
    /// matches come in rowid order straight from FTS5, or from the keys table for a needle shorter than a trigram
    /// (an indexed user's doc is its rowid); the pending users are compared here, and the two lists merged by rowid.
    func ids(matching needle: [UInt8], limit: Int, schema: AuthSchema, probeKeys: Int,
             normalizer: inout NameNormalizer) throws -> (ids: [BetterAuthUserID], plan: NameSearch.Plan)? {
        let characters = needle.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        let short = characters < UserSearchIndex.minimumNeedle
        guard let (sql, terms) = try searchable(schema) else { return nil }
        do {
            guard try pendingCount() <= NameSearch.maxPending else { return nil }
            var found: [(rowid: Int64, id: String)]
            if short, terms, let viaTerms = try shortThroughTerms(needle, sql: sql, limit: limit, probeKeys: probeKeys) {
                found = viaTerms
            } else {
                // instr compares characters, which for UTF-8 text is the byte comparison of `contains`.
                let (query, argument) = short ? (sql.shortMatches, String(decoding: needle, as: UTF8.self)) : (sql.matches, NameSearch.phrase(needle))
                found = try db.rows(query, [argument, limit]).compactMap { row in
                    guard let rowid = row[0].int64, let id = row[1].string else { return nil }
                    return (rowid, id)
                }
            }
            try db.forEach(sql.pendingUsers) { row in
                guard let rowid = row[0].int64, let id = row[1].string, let name = row[2].string else { return }
                if NameSearch.contains(normalizer.bytes(name), needle) { found.append((rowid, id)) }
            }
            found.sort { $0.rowid < $1.rowid }
            return (found.prefix(limit).map { BetterAuthUserID($0.id) }, short ? .keys : .index)
        } catch let error as DatabaseError where error.code == 1 {
            // SQLITE_ERROR: this SQLite cannot read the index (no FTS5 here, though the store has it). Scan.
            return nil
        }
    }

    /// The first `limit` indexed users (not pending) whose key contains a needle of one or two characters, without
    /// reading every key: a key of three characters or more contains it iff one of its trigrams does, so FTS5 finds
    /// them through the trigrams holding the needle (from the terms table); shorter keys come from their partial
    /// index. Nil when the needle is in more than `maxTerms` trigrams.
    private func shortThroughTerms(_ needle: [UInt8], sql: Statements, limit: Int, probeKeys: Int) throws -> [(rowid: Int64, id: String)]? {
        let text = String(decoding: needle, as: UTF8.self)
        // A common needle is answered by the first keys (a few milliseconds of instr) faster than by FTS5 merging
        // many long doclists: when the first `probeKeys` keys hold `limit` matches, those are the first matches.
        let names = SQL.quote(UserSearchIndex.namesTable)
        let bound = try db.scalar("SELECT doc FROM \(names) ORDER BY doc LIMIT 1 OFFSET ?", [max(probeKeys, 1) - 1]).int64
        let probe: [(rowid: Int64, id: String)] = try db.rows(sql.shortMatchesBelow, [text, bound ?? Int64.max, limit]).compactMap { row in
            guard let rowid = row[0].int64, let id = row[1].string else { return nil }
            return (rowid, id)
        }
        if probe.count >= limit || bound == nil { return probe }
        let terms = try db.rows("SELECT term FROM \(SQL.quote(UserSearchIndex.termsTable)) WHERE instr(term, ?) > 0 LIMIT ?",
                                [text, Self.maxTerms + 1]).compactMap { $0[0].string }
        guard terms.count <= Self.maxTerms else { return nil }
        var rows = try db.rows(sql.shortKeys, [text, limit])
        if !terms.isEmpty {
            let query = terms.map { NameSearch.phrase(Array($0.utf8)) }.joined(separator: " OR ")
            rows += try db.rows(sql.matchesWithKey, [query, limit])
        }
        var found: [(rowid: Int64, id: String)] = []
        for row in rows {
            guard let rowid = row[0].int64, let id = row[1].string, let key = row[2].string else { continue }
            // Always true (each key was found by a part that holds the needle); kept as the scan's own comparison.
            guard NameSearch.contains(Array(key.utf8), needle) else { return nil }
            found.append((rowid, id))
        }
        return found
    }

    /// Every name in rowid order (the index's order), stepped in SQLite's C, until `limit` match.
    func scan(_ needle: [UInt8], limit: Int, schema: AuthSchema, normalizer: inout NameNormalizer) throws -> [BetterAuthUserID] {
        let user = schema.user
        var ids: [BetterAuthUserID] = []
        let sql = try rowidName(user).map { "SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql) ORDER BY \($0)" }
            ?? "SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql)"
        let statement = try db.statement(sql)
        try statement.bind([])
        defer { statement.reset() }
        while ids.count < limit, try statement.step() {
            guard let name = statement.value(at: 1).string, let id = statement.value(at: 0).string else { continue }
            if NameSearch.contains(normalizer.bytes(name), needle) { ids.append(BetterAuthUserID(id)) }
        }
        return ids
    }
}

extension SQLiteStoreEngine {
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? {
        (db as? SQLiteDatabase).map(SQLiteNameIndex.init)
    }
}
