import Foundation
import Storage

/// Name substring search, compared after normalisation (case, accents, spacing: `NameNormalizer`): the users
/// whose normalized name contains the normalized query, in the order the engine's index keeps them (SQLite's rowid
/// order, Postgres's id order), the first `limit`.
///
/// Two plans give the same answer: through the engine's name search index (`NameIndex`, handed out by
/// `StoreEngine.nameIndex(on:)`) when it can answer, else a scan of every name in the same order, normalized here,
/// that stops at `limit`. An engine without an index scans in id order.
///
/// Kept for ops/bench's `users_search_name_*` rows (few matches among 1,000,000 users in < 20 ms).
///
/// No SQL pattern is built from the query: `%` and `_` are plain characters, and FTS5 gets the query as one
/// quoted phrase, so `"`, `*`, `NEAR`, `AND` and parentheses are plain characters too.
package struct NameSearch {
    let db: SQLDatabase
    let schema: AuthSchema
    /// Keys read in rowid order, for a needle of one or two characters, before the trigram list is consulted.
    var probeKeys = 10_000

    /// Pending users beyond which the index is too far behind to help (`accounts index` folds them in).
    package static let maxPending = 20_000

    /// Trigrams holding a short needle beyond which SQLite's index leaves it to the keys' scan (a needle that common
    /// matches many users early in rowid order, and the scan stops at the limit).
    package static let maxTerms = 500

    /// `GATEHOUSE_NAME_SEARCH=scan` skips the index: a diagnostic switch, and the benchmark's baseline.
    static var scanForced: Bool { getenv("GATEHOUSE_NAME_SEARCH").map { String(cString: $0) } == "scan" }

    /// Which plan answered the last call (for tests and the benchmark's notes).
    package enum Plan: String {
        /// The index (FTS5 trigrams on SQLite, the key table on Postgres).
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
        guard let index = UserSearchIndex.index(db) else {
            return (try Self.scanInIDOrder(db, schema: schema, needle, limit: limit, normalizer: &normalizer), .scan)
        }
        if !Self.scanForced,
           let found = try index.ids(matching: needle, limit: limit, schema: schema, probeKeys: probeKeys, normalizer: &normalizer) {
            return found
        }
        return (try index.scan(needle, limit: limit, schema: schema, normalizer: &normalizer), .scan)
    }

    /// The FTS5 query for a needle: one phrase, quotes doubled, so nothing in it is query syntax.
    package static func phrase(_ needle: [UInt8]) -> String {
        "\"" + String(decoding: needle, as: UTF8.self).replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Every name in `id` order, through the seam, until `limit` match: the scan of an engine whose index keeps users
    /// in id order, or that has none. The rows stream: the table is never held in memory.
    package static func scanInIDOrder(_ db: SQLDatabase, schema: AuthSchema, _ needle: [UInt8], limit: Int,
                              normalizer: inout NameNormalizer) throws -> [BetterAuthUserID] {
        let user = schema.user
        var ids: [BetterAuthUserID] = []
        struct Enough: Error {}
        do {
            try db.scan(user.sql, columns: [user.col(.id), user.col(.name)], where: nil, [], orderedBy: user.col(.id)) { row in
                guard let id = row[0].string, let name = row[1].string else { return }
                if contains(normalizer.bytes(name), needle) { ids.append(BetterAuthUserID(id)) }
                if ids.count >= limit { throw Enough() }
            }
        } catch is Enough {}
        return ids
    }

    package static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
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
