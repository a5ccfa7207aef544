import Storage

/// One engine's name search index, reached through `UserSearchIndex` (how far it can be trusted, building it) and
/// `NameSearch` (its answers): SQLite's FTS5 trigrams (`SQLiteNameIndex`), Postgres's key table (`PostgresNameIndex`).
/// An engine hands one out for a connection of its own (`StoreEngine.nameIndex(on:)`), or nil when it has none: the
/// index is then reported as unsupported, and name search scans the user table in id order.
///
/// Both keep the same two tables by the same names (`UserSearchIndex.namesTable`, `pendingTable`), the same three
/// triggers recording changed users, and each user's key as `UserSearchIndex.key(of:)` makes it.
package protocol NameIndex {
    /// How far the index can be trusted, from the schema and the pending count alone (cheap: no scan).
    func status(schema: AuthSchema) throws -> UserSearchIndex.Status
    /// Whether an index that is current lacks a part this Gatehouse adds (one built by an older Gatehouse), which
    /// `ensure` then builds again.
    func lacksParts() throws -> Bool
    /// Builds the index when it is absent or stale (or with `rebuild`), folds the pending users in when it is
    /// current; in a write transaction of its own (a savepoint inside the caller's). A store that cannot have the
    /// index says why (`.unsupported`) instead of throwing.
    func ensure(schema: AuthSchema, rebuild: Bool) throws -> UserSearchIndex.Change
    /// Drops every part of the index (for tests, and for a store that must go back to the scan).
    func drop(schema: AuthSchema) throws
    /// The first `limit` users whose normalized name contains `needle`, in the order `scan` meets them, and the plan
    /// that found them; nil when the index cannot answer (absent, stale, too far behind), so name search scans.
    /// `probeKeys`: keys an engine may read in order before it looks a short needle up another way.
    func ids(matching needle: [UInt8], limit: Int, schema: AuthSchema, probeKeys: Int,
             normalizer: inout NameNormalizer) throws -> (ids: [BetterAuthUserID], plan: NameSearch.Plan)?
    /// Every name, normalized here, in the order the index answers in, until `limit` match: name search without the
    /// index. The rows stream: the table is never held in memory.
    func scan(_ needle: [UInt8], limit: Int, schema: AuthSchema, normalizer: inout NameNormalizer) throws -> [BetterAuthUserID]
}
