import Foundation
import Storage

/// Name substring search, compared after normalisation (case, accents, spacing: `NameNormalizer`): the users
/// whose normalized name contains the normalized query, in the user table's rowid order, the first `limit`.
///
/// Two plans give the same answer. On Postgres, through `PostgresNameIndex` when it is current (the server finds the
/// indexed matches). On SQLite, through `UserSearchIndex` when it is current: the trigram index finds the first
/// indexed matches (a query of one or two characters, which has no trigram, reads the first keys, then the
/// trigrams holding it from the index's list and the keys shorter than a trigram), and the users changed since (pending) are read and compared directly. Otherwise a scan of every name in
/// rowid order, normalized here, that stops at `limit`.
///
/// Kept for ops/bench's `users_search_name_*` rows (few matches among 1,000,000 users in < 20 ms).
///
/// No SQL pattern is built from the query: `%` and `_` are plain characters, and FTS5 gets the query as one
/// quoted phrase, so `"`, `*`, `NEAR`, `AND` and parentheses are plain characters too.
struct NameSearch {
    let db: SQLDatabase
    let schema: AuthSchema
    /// Keys read in rowid order, for a needle of one or two characters, before the trigram list is consulted.
    var probeKeys = 10_000

    /// Pending users beyond which the index is too far behind to help (`accounts index` folds them in).
    static let maxPending = 20_000

    /// `GATEHOUSE_NAME_SEARCH=scan` skips the index: a diagnostic switch, and the benchmark's baseline.
    static var scanForced: Bool { getenv("GATEHOUSE_NAME_SEARCH").map { String(cString: $0) } == "scan" }

    /// Which plan answered the last call (for tests and the benchmark's notes).
    enum Plan: String {
        /// FTS5 trigrams.
        case index
        /// A needle of one or two characters: the first keys, then the trigrams holding it (or all keys, past 500).
        case keys
        /// Every name, normalized here.
        case scan
    }

    func ids(matching query: String, limit: Int) throws -> (ids: [BetterAuthUserID], plan: Plan) {
        var normalizer = NameNormalizer()
        let needle = normalizer.bytes(query)
        guard !needle.isEmpty, limit > 0 else { return ([], .scan) }
        if !Self.scanForced, let postgres = db as? PostgresConnection,
           let found = try PostgresNameIndex.ids(matching: needle, limit: limit, schema: schema, db: postgres, normalizer: &normalizer) {
            return (found, .index)
        }
        let characters = needle.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        if !Self.scanForced, let found = try indexed(needle, short: characters < UserSearchIndex.minimumNeedle, limit: limit, normalizer: &normalizer) {
            return (found, characters < UserSearchIndex.minimumNeedle ? .keys : .index)
        }
        return (try scan(needle, limit: limit, normalizer: &normalizer), .scan)
    }

    /// The FTS5 query for a needle: one phrase, quotes doubled, so nothing in it is query syntax.
    static func phrase(_ needle: [UInt8]) -> String {
        "\"" + String(decoding: needle, as: UTF8.self).replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Through the index; nil when it cannot answer (absent, stale, too far behind). The first `limit` indexed
    /// matches come in rowid order straight from FTS5, or from the keys table for a `short` needle (an indexed
    /// user's doc is its rowid); the pending users are compared here, and the two lists merged by rowid.
    private func indexed(_ needle: [UInt8], short: Bool, limit: Int, normalizer: inout NameNormalizer) throws -> [BetterAuthUserID]? {
        guard let sqlite = db as? SQLiteDatabase, let (sql, terms) = try UserSearchIndex.searchable(sqlite, schema: schema) else { return nil }
        do {
            guard try UserSearchIndex.pendingCount(sqlite) <= Self.maxPending else { return nil }
            var found: [(rowid: Int64, id: String)]
            if short, terms, let viaTerms = try shortThroughTerms(needle, sql: sql, limit: limit) {
                found = viaTerms
            } else {
                // instr compares characters, which for UTF-8 text is the byte comparison of `contains`.
                let (query, argument) = short ? (sql.shortMatches, String(decoding: needle, as: UTF8.self)) : (sql.matches, Self.phrase(needle))
                found = try db.rows(query, [argument, limit]).compactMap { row in
                    guard let rowid = row[0].int64, let id = row[1].string else { return nil }
                    return (rowid, id)
                }
            }
            try db.forEach(sql.pendingUsers) { row in
                guard let rowid = row[0].int64, let id = row[1].string, let name = row[2].string else { return }
                if Self.contains(normalizer.bytes(name), needle) { found.append((rowid, id)) }
            }
            found.sort { $0.rowid < $1.rowid }
            return found.prefix(limit).map { BetterAuthUserID($0.id) }
        } catch let error as DatabaseError where error.code == 1 {
            // SQLITE_ERROR: this SQLite cannot read the index (no FTS5 here, though the store has it). Scan.
            return nil
        }
    }

    /// Trigrams holding a short needle beyond which `shortThroughTerms` leaves it to the keys' scan (a needle
    /// that common matches many users early in rowid order, and the scan stops at the limit).
    static let maxTerms = 500

    /// The first `limit` indexed users (not pending) whose key contains a needle of one or two characters, without
    /// reading every key: a key of three characters or more contains it iff one of its trigrams does, so FTS5 finds
    /// them through the trigrams holding the needle (from the terms table); shorter keys come from their partial
    /// index. Nil when the needle is in more than `maxTerms` trigrams.
    private func shortThroughTerms(_ needle: [UInt8], sql: UserSearchIndex.SQL, limit: Int) throws -> [(rowid: Int64, id: String)]? {
        let text = String(decoding: needle, as: UTF8.self)
        // A common needle is answered by the first keys (a few milliseconds of instr) faster than by FTS5 merging
        // many long doclists: when the first `probeKeys` keys hold `limit` matches, those are the first matches.
        let names = SQLDialect.quote(UserSearchIndex.namesTable)
        let bound = try db.scalar("SELECT doc FROM \(names) ORDER BY doc LIMIT 1 OFFSET ?", [max(probeKeys, 1) - 1]).int64
        let probe: [(rowid: Int64, id: String)] = try db.rows(sql.shortMatchesBelow, [text, bound ?? Int64.max, limit]).compactMap { row in
            guard let rowid = row[0].int64, let id = row[1].string else { return nil }
            return (rowid, id)
        }
        if probe.count >= limit || bound == nil { return probe }
        let terms = try db.rows("SELECT term FROM \(SQLDialect.quote(UserSearchIndex.termsTable)) WHERE instr(term, ?) > 0 LIMIT ?",
                                [text, Self.maxTerms + 1]).compactMap { $0[0].string }
        guard terms.count <= Self.maxTerms else { return nil }
        var rows = try db.rows(sql.shortKeys, [text, limit])
        if !terms.isEmpty {
            let query = terms.map { Self.phrase(Array($0.utf8)) }.joined(separator: " OR ")
            rows += try db.rows(sql.matchesWithKey, [query, limit])
        }
        var found: [(rowid: Int64, id: String)] = []
        for row in rows {
            guard let rowid = row[0].int64, let id = row[1].string, let key = row[2].string else { continue }
            // Always true (each key was found by a part that holds the needle); kept as the scan's own comparison.
            guard Self.contains(Array(key.utf8), needle) else { return nil }
            found.append((rowid, id))
        }
        return found
    }

    /// Every name, in rowid order when the table has one (SQLite) or in `id` order (an engine without rowids),
    /// until `limit` match. The rows stream: the table is never held in memory.
    private func scan(_ needle: [UInt8], limit: Int, normalizer: inout NameNormalizer) throws -> [BetterAuthUserID] {
        let user = schema.user
        var ids: [BetterAuthUserID] = []
        guard let sqlite = db as? SQLiteDatabase else {
            struct Enough: Error {}
            do {
                try db.forEach("SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql) ORDER BY \(user.col(.id))", []) { row in
                    guard let id = row[0].string, let name = row[1].string else { return }
                    if Self.contains(normalizer.bytes(name), needle) { ids.append(BetterAuthUserID(id)) }
                    if ids.count >= limit { throw Enough() }
                }
            } catch is Enough {}
            return ids
        }
        let sql = try UserSearchIndex.rowidName(sqlite, table: user).map { "SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql) ORDER BY \($0)" }
            ?? "SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql)"
        let statement = try sqlite.statement(sql)
        try statement.bind([])
        defer { statement.reset() }
        while ids.count < limit, try statement.step() {
            guard let name = statement.value(at: 1).string, let id = statement.value(at: 0).string else { continue }
            if Self.contains(normalizer.bytes(name), needle) { ids.append(BetterAuthUserID(id)) }
        }
        return ids
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        if needle.isEmpty { return true }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            var match = true
            for offset in 1..<needle.count where haystack[start + offset] != needle[offset] { match = false; break }
            if match { return true }
        }
        return false
    }
}
