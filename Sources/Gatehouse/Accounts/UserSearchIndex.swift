import Storage

/// Gatehouse's index for name search: an FTS5 trigram index over every user's normalized name
/// (`NameNormalizer`), so that a substring search reads the few matching rows instead of every name.
///
/// Four `gatehouse_` tables, none on Better Auth's side of the schema:
/// - `gatehouse_user_search_names` (doc, user_id, key): the normalized name of each user when last indexed, under
///   the user's rowid, so FTS5 (which yields rowids in order) gives matches in the order a scan meets them and a
///   search stops at its limit;
/// - `gatehouse_user_search`: FTS5 over `key` (external content, trigram, case-sensitive: keys are already folded);
/// - `gatehouse_user_search_pending` (user_id): users inserted, renamed or deleted since;
/// - `gatehouse_user_search_terms` (term): every trigram indexed, for needles of one or two characters.
///
/// Normalization (accents, apostrophes, spacing) is Swift code that SQL cannot run, and Better Auth writes users
/// without Gatehouse running. So the triggers on the user table only record *which* user changed, with plain
/// SQL that cannot fail or conflict (and needs no FTS5 in Better Auth's SQLite); a search reads the pending users
/// directly, and `accounts index` (or `init`) folds them into the index. A search is therefore always exact.
///
/// Created from the schema map, like `AccountIndexes`: the user table may be renamed and its columns are
/// camelCase or snake_case, so the triggers cannot be a static migration. Without SQLite's FTS5 trigram
/// tokenizer (SQLite < 3.34, or built without FTS5) there is no index and name search keeps its scan.
///
///     try UserSearchIndex.ensure(store.db, schema: store.schema)   // build, or fold pending changes
///     let status = try UserSearchIndex.status(store.db, schema: store.schema)
public enum UserSearchIndex {
    /// The FTS5 table.
    public static let table = "gatehouse_user_search"
    /// The indexed keys (the FTS5 table's external content).
    public static let namesTable = "gatehouse_user_search_names"
    /// Users changed since they were indexed.
    public static let pendingTable = "gatehouse_user_search_pending"
    /// Every trigram of the indexed keys (a superset: a fold adds, never removes), so that a needle of one or two
    /// characters finds the trigrams holding it without reading FTS5's doclists. Absent in an index built before it.
    public static let termsTable = "gatehouse_user_search_terms"
    /// The partial index of the keys shorter than a trigram (which FTS5 cannot find).
    static let shortKeysIndex = "gatehouse_user_search_names_short"
    static let insertTrigger = "gatehouse_user_search_insert"
    static let updateTrigger = "gatehouse_user_search_update"
    static let deleteTrigger = "gatehouse_user_search_delete"

    /// Trigrams: a needle of fewer characters (Unicode scalars) has none, and is looked for in the keys one by one.
    public static let minimumNeedle = 3
    /// Beyond this many pending users a fold rebuilds the whole index (cheaper than row-by-row updates).
    static let rebuildFraction = 4

    /// How far the index can be trusted.
    public enum State: String, Sendable, Codable {
        /// Built, triggers in place; pending changes (if any) are read directly by searches.
        case current
        /// No index: built by `gatehouse init` or `gatehouse accounts index`.
        case absent
        /// Tables present but a trigger is missing or was written for other columns (the user table was
        /// recreated or renamed), or the user rows were renumbered (a dump restored): changes may have been
        /// missed or docs no longer name rowids. `accounts index` rebuilds it.
        case stale
        /// A rowid-less user table, or a SQLite without FTS5's trigram tokenizer: name search scans.
        case unsupported
    }

    /// What `status` finds.
    public struct Status: Sendable, Codable, Equatable {
        public let state: State
        /// Users changed since the index was last folded (searched directly until then).
        public let pending: Int
        /// Why the index is unsupported or stale, in one line.
        public let reason: String?
    }

    /// What `ensure` did.
    public enum Change: Sendable, Codable, Equatable {
        /// Built from scratch, with this many named users.
        case built(users: Int)
        /// This many pending users folded in.
        case folded(users: Int)
        case unchanged
        /// Not possible here; the reason.
        case unsupported(String)
    }

    // MARK: - SQL

    /// The SQL that depends on the user table's name and columns.
    struct SQL {
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
            let id = user.col(.id), name = user.col(.name), pending = SQLDialect.quote(UserSearchIndex.pendingTable)
            // No OR IGNORE: an outer INSERT OR ABORT would turn a conflict here into a failure of Better Auth's write.
            func mark(_ row: String) -> String {
                "INSERT INTO \(pending) (user_id) SELECT \(row).\(id) WHERE \(row).\(id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(pending) WHERE user_id = \(row).\(id));"
            }
            triggers = [
                (UserSearchIndex.insertTrigger, "CREATE TRIGGER \(SQLDialect.quote(UserSearchIndex.insertTrigger)) AFTER INSERT ON \(user.sql) BEGIN \(mark("NEW")) END"),
                (UserSearchIndex.updateTrigger, "CREATE TRIGGER \(SQLDialect.quote(UserSearchIndex.updateTrigger)) AFTER UPDATE OF \(name), \(id) ON \(user.sql) BEGIN \(mark("OLD")) \(mark("NEW")) END"),
                (UserSearchIndex.deleteTrigger, "CREATE TRIGGER \(SQLDialect.quote(UserSearchIndex.deleteTrigger)) AFTER DELETE ON \(user.sql) BEGIN \(mark("OLD")) END"),
            ]
            let fts = SQLDialect.quote(UserSearchIndex.table), names = SQLDialect.quote(UserSearchIndex.namesTable)
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
    static func rowidName(_ db: SQLiteDatabase, table: AuthSchema.Table) throws -> String? {
        let columns = Set(try db.columns(of: table.name).map { $0.name.lowercased() })
        guard let free = ["rowid", "_rowid_", "oid"].first(where: { !columns.contains($0) }) else { return nil }
        do {
            _ = try db.statement("SELECT \(free) FROM \(table.sql) LIMIT 0")
            return free
        } catch is DatabaseError {
            return nil
        }
    }

    static func sql(_ db: SQLiteDatabase, schema: AuthSchema) throws -> SQL? {
        try rowidName(db, table: schema.user).map { SQL(schema.user, rowid: $0) }
    }

    /// Whether this SQLite has FTS5 with the trigram tokenizer (3.34+), tried on a temporary table.
    static func trigramAvailable(_ db: SQLiteDatabase) -> Bool {
        do {
            try db.execute("CREATE VIRTUAL TABLE temp.gatehouse_trigram_probe USING fts5(x, tokenize = 'trigram case_sensitive 1')")
            try db.execute("DROP TABLE temp.gatehouse_trigram_probe")
            return true
        } catch {
            return false
        }
    }

    static let unavailableReason = "this SQLite has no FTS5 trigram tokenizer (it needs 3.34 or later, built with FTS5): name search scans the user table"
    static let rowlessReason = "the user table is WITHOUT ROWID: name search scans it"

    // MARK: - status

    /// How far the index can be trusted, from the schema and the pending count alone (cheap: no scan).
    static func status(_ db: SQLiteDatabase, schema: AuthSchema) throws -> Status {
        let objects = try schemaObjects(db)
        guard objects[table] != nil, objects[namesTable] != nil, objects[pendingTable] != nil else {
            guard try sql(db, schema: schema) != nil else { return Status(state: .unsupported, pending: 0, reason: rowlessReason) }
            // Probing needs the temp schema, which a read-only connection still has.
            return trigramAvailable(db) ? Status(state: .absent, pending: 0, reason: nil)
                : Status(state: .unsupported, pending: 0, reason: unavailableReason)
        }
        let pending = try pendingCount(db)
        guard let sql = try sql(db, schema: schema) else { return Status(state: .stale, pending: pending, reason: rowlessReason) }
        if let problem = try triggerProblem(objects, sql) ?? alignmentProblem(db, sql) { return Status(state: .stale, pending: pending, reason: problem) }
        return Status(state: .current, pending: pending, reason: nil)
    }

    /// The SQL to search through the index when it can be trusted (built, every trigger as made); nil otherwise.
    /// Reads the schema only, so it is cheap enough for every search. `terms`: the trigram list and the short
    /// keys' index are there (an index built before them has neither until `accounts index` builds it again).
    static func searchable(_ db: SQLiteDatabase, schema: AuthSchema) throws -> (sql: SQL, terms: Bool)? {
        let objects = try schemaObjects(db)
        guard objects[table] != nil, objects[namesTable] != nil, objects[pendingTable] != nil,
              let sql = try sql(db, schema: schema), triggerProblem(objects, sql) == nil, try alignmentProblem(db, sql) == nil else { return nil }
        return (sql, objects[termsTable] != nil && objects[shortKeysIndex] != nil)
    }

    /// Whether the index lacks the trigram list or the short keys' index (built before them).
    private static func lacksTerms(_ db: SQLiteDatabase) throws -> Bool {
        let objects = try schemaObjects(db)
        return objects[table] != nil && (objects[termsTable] == nil || objects[shortKeysIndex] == nil)
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

    static func pendingCount(_ db: SQLiteDatabase) throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM \(SQLDialect.quote(pendingTable))").int64 ?? 0)
    }

    /// The index's tables and triggers that exist: name → SQL.
    static func schemaObjects(_ db: SQLiteDatabase) throws -> [String: String] {
        Dictionary(try db.rows("SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?, ?, ?, ?, ?)",
                               [table, namesTable, pendingTable, insertTrigger, updateTrigger, deleteTrigger, termsTable, shortKeysIndex])
            .map { ($0[0].string ?? "", $0[1].string ?? "") }) { first, _ in first }
    }

    /// Each indexed user's doc is its rowid when it was indexed, and a search relies on it still being so (results
    /// come in doc order). Rowids change only when the table is copied or restored (`.dump`, `.recover`), which
    /// renumbers the rows in order: any gap below the last indexed user moves that user, so checking it is enough.
    private static func alignmentProblem(_ db: SQLiteDatabase, _ sql: SQL) throws -> String? {
        guard let last = try db.row(sql.lastIndexed) else { return nil }
        if last[1].isNull { return "an indexed user was deleted without the delete trigger recording it" }
        return last[0].int64 == last[1].int64 ? nil : "the user table's rowids changed since it was indexed; was the store restored from a dump?"
    }

    private static func triggerProblem(_ objects: [String: String], _ sql: SQL) -> String? {
        for trigger in sql.triggers where objects[trigger.name] != trigger.sql {
            return objects[trigger.name] == nil ? "the trigger \(trigger.name) on the user table is missing; was the table recreated?"
                : "the trigger \(trigger.name) was made for other columns or another table"
        }
        return nil
    }

    // MARK: - building

    /// Builds the index when it is absent or stale, folds pending users in when it is current. Runs its own
    /// write transaction (a savepoint inside one). Throws nothing for an unsupported store: says why instead.
    /// With `rebuild`, a current index is built again from scratch (after a Foundation upgrade changed how
    /// names fold, say).
    @discardableResult
    static func ensure(_ db: SQLiteDatabase, schema: AuthSchema, rebuild: Bool = false) throws -> Change {
        // Checked before taking the write lock: on an up-to-date store this writes nothing.
        let before = try status(db, schema: schema)
        if before.state == .unsupported { return .unsupported(before.reason ?? unavailableReason) }
        let lacking = try lacksTerms(db)
        if before.state == .current && before.pending == 0 && !rebuild && !lacking { return .unchanged }
        return try db.write {
            let now = try status(db, schema: schema)
            guard let sql = try sql(db, schema: schema) else { return .unsupported(rowlessReason) }
            let lacksTerms = try lacksTerms(db)
            switch now.state {
            case .unsupported: return .unsupported(now.reason ?? unavailableReason)
            case .absent, .stale: return .built(users: try build(db, sql: sql))
            case .current where rebuild || lacksTerms: return .built(users: try build(db, sql: sql))
            case .current:
                guard now.pending > 0 else { return .unchanged }
                let users = try db.scalar("SELECT count(*) FROM \(SQLDialect.quote(namesTable))").int64 ?? 0
                if Int64(now.pending) * Int64(rebuildFraction) > users { return .built(users: try build(db, sql: sql)) }
                return .folded(users: try fold(db, sql: sql))
            }
        }
    }

    /// `ensure` as an audited change (`accounts.index`, with what was done); nothing is written when the index
    /// is current with no pending users.
    @discardableResult
    public static func ensure(_ store: Store, actor: Actor, rebuild: Bool = false) throws -> Change {
        let before = try status(store.db, schema: store.schema)
        if before.state == .unsupported { return .unsupported(before.reason ?? unavailableReason) }
        let lacking = try (store.db as? SQLiteDatabase).map(lacksTerms) ?? false
        if before.state == .current && before.pending == 0 && !rebuild && !lacking { return .unchanged }
        return try store.db.write {
            let change = try ensure(store.db, schema: store.schema, rebuild: rebuild)
            let details: [String: AuditValue]
            switch change {
            case .built(let users): details = ["search_index": .string("built"), "users": .int(Int64(users))]
            case .folded(let users): details = ["search_index": .string("folded"), "users": .int(Int64(users))]
            case .unchanged, .unsupported: return change
            }
            try store.audit.append(store.db, actor: actor, action: "accounts.index", subject: store.path, details: details)
            return change
        }
    }

    /// Drops every part of the index (for tests, and for a store that must go back to the scan).
    static func drop(_ db: SQLiteDatabase) throws {
        try db.write {
            for trigger in [insertTrigger, updateTrigger, deleteTrigger] { try db.execute("DROP TRIGGER IF EXISTS \(SQLDialect.quote(trigger))") }
            for name in [table, namesTable, pendingTable, termsTable] { try db.execute("DROP TABLE IF EXISTS \(SQLDialect.quote(name))") }
        }
    }

    /// Builds everything from scratch inside the caller's write transaction; returns the users with a name key.
    private static func build(_ db: SQLiteDatabase, sql: SQL) throws -> Int {
        try drop(db)
        let names = SQLDialect.quote(namesTable), pending = SQLDialect.quote(pendingTable)
        try db.execute("CREATE TABLE \(pending) (user_id TEXT PRIMARY KEY) WITHOUT ROWID")
        try db.execute("CREATE TABLE \(names) (doc INTEGER PRIMARY KEY, user_id TEXT NOT NULL, key TEXT NOT NULL)")
        try db.execute("CREATE VIRTUAL TABLE \(SQLDialect.quote(table)) USING fts5(key, content = \(SQLDialect.quote(namesTable)), content_rowid = 'doc', tokenize = 'trigram case_sensitive 1')")
        for trigger in sql.triggers { try db.execute(trigger.sql) }
        var normalizer = NameNormalizer()
        let insert = try db.statement("INSERT INTO \(names) (doc, user_id, key) VALUES (?, ?, ?)")
        var count = 0
        // The same reading of each row as the scan (`NameSearch`): a name that is not text is skipped.
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
        try db.execute("CREATE INDEX \(SQLDialect.quote(namesTable + "_user_id")) ON \(names) (user_id)")
        try db.execute("CREATE INDEX \(SQLDialect.quote(shortKeysIndex)) ON \(names) (doc) WHERE length(key) < 3")
        try db.execute("INSERT INTO \(SQLDialect.quote(table)) (\(SQLDialect.quote(table))) VALUES ('rebuild')")
        // FTS5's own vocabulary, read once here (reading it counts every doclist: seconds on a million users).
        let terms = SQLDialect.quote(termsTable), vocabulary = "temp.gatehouse_user_search_vocabulary"
        try db.execute("CREATE TABLE \(terms) (term TEXT PRIMARY KEY) WITHOUT ROWID")
        try db.execute("DROP TABLE IF EXISTS \(vocabulary)")
        try db.execute("CREATE VIRTUAL TABLE \(vocabulary) USING fts5vocab(main, \(SQLDialect.quote(table)), 'row')")
        try db.execute("INSERT INTO \(terms) (term) SELECT term FROM \(vocabulary)")
        try db.execute("DROP TABLE \(vocabulary)")
        return count
    }

    /// Re-reads each pending user into the index; returns how many were pending. Every pending user's old entry
    /// goes first, then the current ones: a deleted user's rowid may have been reused by a new user.
    private static func fold(_ db: SQLiteDatabase, sql: SQL) throws -> Int {
        let fts = SQLDialect.quote(table), names = SQLDialect.quote(namesTable), pending = SQLDialect.quote(pendingTable)
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
            for term in trigrams(text) { try db.execute("INSERT OR IGNORE INTO \(SQLDialect.quote(termsTable)) (term) VALUES (?)", [term]) }
        }
        try db.execute("DELETE FROM \(pending)")
        return ids.count
    }
}

/// The engine's index: SQLite's FTS5 tables, or Postgres's key table (`PostgresNameIndex`); on an engine with
/// neither it is reported as unsupported and name search scans.
extension UserSearchIndex {
    static func otherEngineReason(_ db: SQLDatabase) -> String {
        "Gatehouse has no name search index for \(db.engine.displayName): name search scans the user table"
    }

    /// How far the index can be trusted.
    public static func status(_ db: SQLDatabase, schema: AuthSchema) throws -> Status {
        switch db {
        case let sqlite as SQLiteDatabase: return try status(sqlite, schema: schema)
        case let postgres as PostgresConnection: return try PostgresNameIndex.status(postgres, schema: schema)
        default: return Status(state: .unsupported, pending: 0, reason: otherEngineReason(db))
        }
    }

    /// Builds the index, or folds its pending users in.
    @discardableResult
    public static func ensure(_ db: SQLDatabase, schema: AuthSchema, rebuild: Bool = false) throws -> Change {
        switch db {
        case let sqlite as SQLiteDatabase: return try ensure(sqlite, schema: schema, rebuild: rebuild)
        case let postgres as PostgresConnection: return try PostgresNameIndex.ensure(postgres, schema: schema, rebuild: rebuild)
        default: return .unsupported(otherEngineReason(db))
        }
    }

    /// Drops the index.
    public static func drop(_ db: SQLDatabase, schema: AuthSchema) throws {
        switch db {
        case let sqlite as SQLiteDatabase: try drop(sqlite)
        case let postgres as PostgresConnection: try PostgresNameIndex.drop(postgres, schema: schema)
        default: return
        }
    }
}
