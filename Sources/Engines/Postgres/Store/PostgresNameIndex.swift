import Gatehouse
import Storage

/// Name search's index on Postgres: the Postgres counterpart of `UserSearchIndex`, so that a name search is answered
/// by the server and never pulls the user table through the process.
///
/// Two `gatehouse_` tables under the same names as SQLite's, their `user_id` of the user table's own id type:
/// - `gatehouse_user_search_names` (user_id, key): each user's normalized name (`NameNormalizer`) when last indexed;
/// - `gatehouse_user_search_pending` (user_id): users inserted, renamed or deleted since, recorded by three triggers
///   on the user table that call one function (plain SQL that cannot fail or conflict, as on SQLite).
///
/// A search asks the server for the indexed users whose key contains the needle (a LIKE with the needle escaped, on a table of short
/// keys, in the user table's id order, stopping at the limit), and compares the pending users here: exact, as the
/// scan. Normalization is Swift code that SQL cannot run, so the keys are computed here when the index is built or
/// folded (`accounts index`, `init`, the end of `demo seed`): that reads every name once, a search never does.
///
/// Needs the user table's owner (its triggers are dropped and made again on a rebuild), and the index's owner when
/// it exists: another role gets "unsupported", and name search scans the user table on the server.
struct PostgresNameIndex: NameIndex {
    let db: PostgresConnection

    static let function = "gatehouse_user_search_mark"
    static let triggers = [UserSearchIndex.insertTrigger, UserSearchIndex.updateTrigger, UserSearchIndex.deleteTrigger]
    static let names = SQL.quote(UserSearchIndex.namesTable)
    static let pending = SQL.quote(UserSearchIndex.pendingTable)
    /// Users per statement when keys are written or pending users read.
    static let chunk = 1_000
    /// pg_trgm's GIN index on the keys, where the database has pg_trgm: a needle of three characters or more then
    /// reads the keys that hold its trigrams instead of every key (at ten million users the scan takes about a second).
    static let trigramIndex = SQL.quote(UserSearchIndex.namesTable + "_trgm")

    static let noTriggerRightReason = "the store's role does not own the user table (and the index), so it may not keep triggers on it: name search scans the user table on the server"

    // MARK: - status

    static func status(_ db: PostgresConnection, schema: AuthSchema) throws -> UserSearchIndex.Status {
        let user = PostgresConnection.quote(schema.user.name)
        guard let row = try db.row("""
            SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS tables,
                   (SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = to_regclass($3) AND NOT t.tgisinternal AND t.tgenabled <> 'D'
                      AND t.tgname IN ($4, $5, $6) AND t.tgfoid = to_regproc($7)) AS triggers,
                   coalesce((SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = to_regclass($3)), false)
                     AND coalesce((SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = to_regclass($1)), true) AS may
            """, [names, pending, user, triggers[0], triggers[1], triggers[2], PostgresConnection.quote(function)]) else {
            return UserSearchIndex.Status(state: .absent, pending: 0, reason: nil)
        }
        guard row.bool("may") else { return UserSearchIndex.Status(state: .unsupported, pending: 0, reason: noTriggerRightReason) }
        guard row.bool("tables") else { return UserSearchIndex.Status(state: .absent, pending: 0, reason: nil) }
        let count = try pendingCount(db)
        guard row["triggers"].int64 == Int64(triggers.count) else {
            return UserSearchIndex.Status(state: .stale, pending: count,
                                          reason: "a trigger on the user table that records changed names is missing or disabled: changes may have been missed")
        }
        return UserSearchIndex.Status(state: .current, pending: count, reason: nil)
    }

    static func pendingCount(_ db: PostgresConnection) throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM \(pending)").int64 ?? 0)
    }

    // MARK: - search

    /// The first `limit` users whose normalized name contains `needle`, in the user table's id order (the scan's
    /// order); nil when the index cannot answer (absent, stale, too many pending users).
    static func ids(matching needle: [UInt8], limit: Int, schema: AuthSchema, db: PostgresConnection,
                    normalizer: inout NameNormalizer) throws -> [BetterAuthUserID]? {
        let state = try status(db, schema: schema)
        guard state.state == .current, state.pending <= NameSearch.maxPending else { return nil }
        let user = schema.user, id = user.col(.id)
        // The indexed users that are not pending: the key table is read on the server (in id order with the user
        // table's key when matches are common, scanned in parallel when they are rare). LIKE rather than strpos for
        // the planner's sake: it estimates a pattern's matches, not a function's. Its three special characters are
        // escaped, so the needle is literal text.
        let pattern = "%" + String(decoding: needle, as: UTF8.self).replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        let indexed = try db.rows("""
            SELECT u.\(id) FROM \(user.sql) u JOIN \(names) n ON n.user_id = u.\(id)
            WHERE n.key LIKE $1 ESCAPE '\\' AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.user_id = u.\(id))
            ORDER BY u.\(id) LIMIT $2
            """, [pattern, limit]).compactMap { $0[0].string }
        var matched: [String] = []
        try db.forEach("SELECT u.\(id), u.\(user.col(.name)) FROM \(pending) p JOIN \(user.sql) u ON u.\(id) = p.user_id", []) { row in
            guard let id = row[0].string, let name = row[1].string else { return }
            if NameSearch.contains(normalizer.bytes(name), needle) { matched.append(id) }
        }
        guard !matched.isEmpty else { return indexed.map(BetterAuthUserID.init) }
        // The server puts the two lists in its own order (its collation, the id's type), which Swift cannot repeat.
        let all = indexed + matched
        let marks = all.map { _ in "?" }.joined(separator: ", ")
        return try db.rows("SELECT \(id) FROM \(user.sql) WHERE \(id) IN (\(marks)) ORDER BY \(id) LIMIT ?", all.map { $0 as SQLBindable } + [limit])
            .compactMap { $0[0].string.map(BetterAuthUserID.init) }
    }

    // MARK: - building

    /// As `UserSearchIndex.ensure`, inside the caller's write transaction (or one of its own).
    static func ensure(_ db: PostgresConnection, schema: AuthSchema, rebuild: Bool) throws -> UserSearchIndex.Change {
        let before = try status(db, schema: schema)
        if before.state == .unsupported { return .unsupported(before.reason ?? noTriggerRightReason) }
        if before.state == .current, before.pending == 0, !rebuild, !(try lacksTrigramIndex(db)) { return .unchanged }
        return try db.write {
            let now = try status(db, schema: schema)
            switch now.state {
            case .unsupported: return .unsupported(now.reason ?? noTriggerRightReason)
            case .absent, .stale: return .built(users: try build(db, schema: schema))
            case .current where rebuild: return .built(users: try build(db, schema: schema))
            case .current where try lacksTrigramIndex(db):
                // pg_trgm arrived after the index was built: the keys stand, their trigram index is added.
                try createTrigramIndex(db)
                if now.pending > 0 { _ = try fold(db, schema: schema) }
                return .built(users: Int(try db.scalar("SELECT count(*) FROM \(names)").int64 ?? 0))
            case .current:
                guard now.pending > 0 else { return .unchanged }
                let users = try db.scalar("SELECT count(*) FROM \(names)").int64 ?? 0
                if Int64(now.pending) * Int64(UserSearchIndex.rebuildFraction) > users { return .built(users: try build(db, schema: schema)) }
                return .folded(users: try fold(db, schema: schema))
            }
        }
    }

    static func drop(_ db: PostgresConnection, schema: AuthSchema) throws {
        try db.write {
            if try db.tableExists(schema.user.name) {
                for trigger in triggers { try db.execute("DROP TRIGGER IF EXISTS \(SQL.quote(trigger)) ON \(schema.user.sql)") }
            }
            try db.execute("DROP FUNCTION IF EXISTS \(SQL.quote(function))()")
            try db.execute("DROP TABLE IF EXISTS \(names), \(pending)")
        }
    }

    /// Builds everything from scratch in the caller's write transaction; returns the users with a name key. The
    /// triggers go in first: they lock the user table against writers until the transaction ends, so no change
    /// falls between the keys read here and the triggers that record the next ones.
    private static func build(_ db: PostgresConnection, schema: AuthSchema) throws -> Int {
        let idType = try createTables(db, schema: schema)
        try createTriggers(db, schema: schema)
        let user = schema.user, id = user.col(.id), name = user.col(.name)
        // Every name, a page at a time in id order (the connection cannot COPY while it streams a result).
        var normalizer = NameNormalizer()
        var count = 0
        var last: String?
        while true {
            let page = try db.rows("SELECT \(id)::text, \(name) FROM \(user.sql)" + (last == nil ? "" : " WHERE \(id) > CAST(? AS \(idType))")
                                   + " ORDER BY \(id) LIMIT \(chunk * 10)", last.map { [$0] } ?? [])
            guard let end = page.last?[0].string else { break }
            last = end
            count += try writeKeys(page, db: db, normalizer: &normalizer)
        }
        try createTrigramIndex(db)
        try db.execute("ANALYZE \(names)")
        return count
    }

    /// pg_trgm's GIN operator class, schema-qualified, when the database has the extension (Gatehouse never installs
    /// one: `CREATE EXTENSION pg_trgm` is the database owner's call).
    static func trigramOperatorClass(_ db: PostgresConnection) throws -> String? {
        try db.scalar("""
            SELECT quote_ident(n.nspname) || '.gin_trgm_ops' FROM pg_opclass o
            JOIN pg_namespace n ON n.oid = o.opcnamespace JOIN pg_am m ON m.oid = o.opcmethod
            WHERE o.opcname = 'gin_trgm_ops' AND m.amname = 'gin' LIMIT 1
            """).string
    }

    /// The keys' trigram index (`trigramIndex`), where pg_trgm is installed; nothing otherwise.
    static func createTrigramIndex(_ db: PostgresConnection) throws {
        guard let operatorClass = try trigramOperatorClass(db) else { return }
        try db.execute("CREATE INDEX IF NOT EXISTS \(trigramIndex) ON \(names) USING gin (key \(operatorClass))")
    }

    /// The key table stands without its trigram index although pg_trgm is installed (it came after the build).
    static func lacksTrigramIndex(_ db: PostgresConnection) throws -> Bool {
        guard try db.row("SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NULL AS lacking", [names, trigramIndex])?.bool("lacking") == true else { return false }
        return try trigramOperatorClass(db) != nil
    }

    /// For a bulk load into an empty user table (`demo seed`), inside its transaction: the index's tables, empty and
    /// without triggers, and the user table locked against other writers until the transaction ends. The loader
    /// writes each new user's key itself (`UserSearchIndex.keyRow`); `finishBulk` then adds the triggers.
    static func beginBulk(_ db: PostgresConnection, schema: AuthSchema) throws {
        try db.execute("LOCK TABLE \(schema.user.sql) IN SHARE ROW EXCLUSIVE MODE")
        _ = try createTables(db, schema: schema)
    }

    /// The end of a bulk load (`beginBulk`): the triggers, and the planner's statistics of the keys.
    static func finishBulk(_ db: PostgresConnection, schema: AuthSchema) throws {
        try createTriggers(db, schema: schema)
        try createTrigramIndex(db)
        try db.execute("ANALYZE \(names)")
    }

    /// Drops the index and creates its two tables, empty, their `user_id` of the user id's type; returns the type.
    private static func createTables(_ db: PostgresConnection, schema: AuthSchema) throws -> String {
        try drop(db, schema: schema)
        let user = schema.user
        let idType = try db.scalar("SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = to_regclass(?) AND a.attname = ? AND NOT a.attisdropped",
                                   [PostgresConnection.quote(user.name), user.column(.id)]).string ?? "text"
        try db.execute("CREATE TABLE \(names) (user_id \(idType) PRIMARY KEY, key text NOT NULL)")
        try db.execute("CREATE TABLE \(pending) (user_id \(idType) PRIMARY KEY)")
        return idType
    }

    /// The function that records a changed user, and the three triggers on the user table that call it.
    private static func createTriggers(_ db: PostgresConnection, schema: AuthSchema) throws {
        let user = schema.user, id = user.col(.id), name = user.col(.name)
        // The function names the pending table with its schema: Better Auth's connections may search another path.
        // It runs as its owner (Gatehouse's role, which owns the pending table), so Better Auth's role needs no right
        // on Gatehouse's tables: without SECURITY DEFINER a sign-up by a role without INSERT on the pending table
        // would fail. Its search_path is fixed, as a definer's function must have.
        let qualified = try db.scalar("SELECT quote_ident(current_schema())").string.map { "\($0).\(pending)" } ?? pending
        func mark(_ row: String) -> String {
            "INSERT INTO \(qualified) (user_id) VALUES (\(row).\(id)) ON CONFLICT DO NOTHING;"
        }
        try db.execute("""
            CREATE FUNCTION \(SQL.quote(function))() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $gatehouse$
            BEGIN
              IF TG_OP <> 'INSERT' AND OLD.\(id) IS NOT NULL THEN \(mark("OLD")) END IF;
              IF TG_OP <> 'DELETE' AND NEW.\(id) IS NOT NULL THEN \(mark("NEW")) END IF;
              RETURN NULL;
            END
            $gatehouse$
            """)
        let call = "FOR EACH ROW EXECUTE FUNCTION \(SQL.quote(function))()"
        try db.execute("CREATE TRIGGER \(SQL.quote(triggers[0])) AFTER INSERT ON \(user.sql) \(call)")
        try db.execute("""
            CREATE TRIGGER \(SQL.quote(triggers[1])) AFTER UPDATE OF \(name), \(id) ON \(user.sql)
            FOR EACH ROW WHEN (OLD.\(name) IS DISTINCT FROM NEW.\(name) OR OLD.\(id) IS DISTINCT FROM NEW.\(id))
            EXECUTE FUNCTION \(SQL.quote(function))()
            """)
        try db.execute("CREATE TRIGGER \(SQL.quote(triggers[2])) AFTER DELETE ON \(user.sql) \(call)")
    }

    /// Writes the keys of rows (id as text, name); returns how many had one (a name with no letter has none).
    private static func writeKeys(_ rows: [Row], db: PostgresConnection, normalizer: inout NameNormalizer) throws -> Int {
        var values: [SQLValue] = []
        values.reserveCapacity(rows.count * 2)
        var keys: [String: String] = [:]
        for row in rows {
            guard let id = row[0].string, let name = row[1].string else { continue }
            values += UserSearchIndex.keyRow(id: id, name: name, normalizer: &normalizer, keys: &keys)
        }
        return try copyKeys(values, db: db)
    }

    /// Writes (id, key) pairs into the key table; returns how many.
    static func copyKeys(_ values: [SQLValue], db: PostgresConnection) throws -> Int {
        guard !values.isEmpty else { return 0 }
        return try db.copy(into: UserSearchIndex.namesTable, columns: ["user_id", "key"], values: values[...])
    }

    /// Re-reads each pending user into the index; returns how many were pending. A change committed while this
    /// runs marks its user pending again (the trigger's insert waits for this transaction's delete).
    private static func fold(_ db: PostgresConnection, schema: AuthSchema) throws -> Int {
        let user = schema.user, id = user.col(.id)
        let ids = try db.rows("DELETE FROM \(pending) RETURNING user_id::text").compactMap { $0[0].string }
        var normalizer = NameNormalizer()
        for start in stride(from: 0, to: ids.count, by: chunk) {
            let part = Array(ids[start..<min(ids.count, start + chunk)])
            let marks = part.map { _ in "?" }.joined(separator: ", ")
            try db.execute("DELETE FROM \(names) WHERE user_id IN (\(marks))", part)
            // A renamed id was pending under both ids; a deleted user has no row left.
            let rows = try db.rows("SELECT \(id)::text, \(user.col(.name)) FROM \(user.sql) WHERE \(id) IN (\(marks))", part)
            _ = try writeKeys(rows, db: db, normalizer: &normalizer)
        }
        return ids.count
    }
}

// MARK: - NameIndex

extension PostgresNameIndex {
    func status(schema: AuthSchema) throws -> UserSearchIndex.Status { try Self.status(db, schema: schema) }
    /// pg_trgm was installed after the index was built: `accounts index` adds the keys' trigram index.
    func lacksParts() throws -> Bool { try Self.lacksTrigramIndex(db) }
    func ensure(schema: AuthSchema, rebuild: Bool) throws -> UserSearchIndex.Change { try Self.ensure(db, schema: schema, rebuild: rebuild) }
    func drop(schema: AuthSchema) throws { try Self.drop(db, schema: schema) }

    func ids(matching needle: [UInt8], limit: Int, schema: AuthSchema, probeKeys: Int,
             normalizer: inout NameNormalizer) throws -> (ids: [BetterAuthUserID], plan: NameSearch.Plan)? {
        try Self.ids(matching: needle, limit: limit, schema: schema, db: db, normalizer: &normalizer).map { ($0, .index) }
    }

    /// The scan in id order, the order the server answers the index's matches in.
    func scan(_ needle: [UInt8], limit: Int, schema: AuthSchema, normalizer: inout NameNormalizer) throws -> [BetterAuthUserID] {
        try NameSearch.scanInIDOrder(db, schema: schema, needle, limit: limit, normalizer: &normalizer)
    }
}

extension PostgresStoreEngine {
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? {
        (db as? PostgresConnection).map(PostgresNameIndex.init)
    }
}
