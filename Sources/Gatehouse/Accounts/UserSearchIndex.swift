import Storage

/// Gatehouse's index for name search, over every user's normalized name (`NameNormalizer`), so that a substring
/// search reads the few matching rows instead of every name. Each engine keeps it its own way (`NameIndex`: FTS5
/// trigrams on SQLite, `SQLiteNameIndex`; a key table the server scans on Postgres, `PostgresNameIndex`); this is
/// what the domain asks of it, whatever the engine.
///
/// The same `gatehouse_` tables on every engine: `gatehouse_user_search_names` (each user's key when last indexed)
/// and `gatehouse_user_search_pending` (users inserted, renamed or deleted since), plus the engine's own.
///
/// Normalization (accents, apostrophes, spacing) is Swift code that SQL cannot run, and Better Auth writes users
/// without Gatehouse running. So the triggers on the user table only record *which* user changed, with plain
/// SQL that cannot fail or conflict; a search reads the pending users directly, and `accounts index` (or `init`,
/// or the end of `demo seed`) folds them into the index. A search is therefore always exact.
///
///     try UserSearchIndex.ensure(store.db, schema: store.schema)   // build, or fold pending changes
///     let status = try UserSearchIndex.status(store.db, schema: store.schema)
public enum UserSearchIndex {
    /// The index's own table (SQLite's FTS5 table), the name `init` reports when it creates the index.
    public static let table = "gatehouse_user_search"
    /// The indexed keys (on SQLite, the FTS5 table's external content).
    public static let namesTable = "gatehouse_user_search_names"
    /// Users changed since they were indexed.
    public static let pendingTable = "gatehouse_user_search_pending"
    /// SQLite's list of every trigram of the indexed keys (a superset: a fold adds, never removes), so that a needle of
    /// one or two characters finds the trigrams holding it without reading FTS5's doclists. Absent in an index built
    /// before it.
    public static let termsTable = "gatehouse_user_search_terms"
    package static let insertTrigger = "gatehouse_user_search_insert"
    package static let updateTrigger = "gatehouse_user_search_update"
    package static let deleteTrigger = "gatehouse_user_search_delete"

    /// Trigrams (SQLite's index): a needle of fewer characters (Unicode scalars) has none, and is looked for in the keys
    /// one by one.
    public static let minimumNeedle = 3
    /// Beyond this many pending users a fold rebuilds the whole index (cheaper than row-by-row updates).
    package static let rebuildFraction = 4

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
        /// The store cannot keep the index (SQLite: a rowid-less user table, or no FTS5 trigram tokenizer; Postgres: a
        /// role that does not own the user table; an engine without one): name search scans.
        case unsupported
    }

    /// What `status` finds.
    public struct Status: Sendable, Codable, Equatable {
        public let state: State
        /// Users changed since the index was last folded (searched directly until then).
        public let pending: Int
        /// Why the index is unsupported or stale, in one line.
        public let reason: String?

        package init(state: State, pending: Int, reason: String?) {
            self.state = state
            self.pending = pending
            self.reason = reason
        }
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

    /// The key a user is indexed under: the normalized name (`NameNormalizer`) as text, empty when the name has no
    /// letter or digit. Every engine's index keeps this key.
    static func key(of name: String, normalizer: inout NameNormalizer) -> String {
        String(decoding: normalizer.bytes(name), as: UTF8.self)
    }

    /// The key table's row for a user with `name`: (id, key), or nothing when the name has no letter or digit.
    /// `keys` remembers each name's key (a bulk load repeats names).
    package static func keyRow(id: String, name: String, normalizer: inout NameNormalizer, keys: inout [String: String]) -> [SQLValue] {
        let key: String
        if let known = keys[name] {
            key = known
        } else {
            key = Self.key(of: name, normalizer: &normalizer)
            keys[name] = key
        }
        return key.isEmpty ? [] : [.text(id), .text(key)]
    }

    // MARK: - the engine's index

    /// The engine's index on `db` (`StoreEngine.nameIndex(on:)`, asked of the engines that speak its dialect), or
    /// nil when the engine has none.
    static func index(_ db: SQLDatabase) -> (any NameIndex)? {
        StoreEngines.engines(speaking: db.dialect).lazy.compactMap { $0.nameIndex(on: db) }.first
    }

    static func otherEngineReason(_ db: SQLDatabase) -> String {
        "Gatehouse has no name search index for \(db.dialect.name): name search scans the user table"
    }

    /// How far the index can be trusted, from the schema and the pending count alone (cheap: no scan).
    public static func status(_ db: SQLDatabase, schema: AuthSchema) throws -> Status {
        guard let index = index(db) else { return Status(state: .unsupported, pending: 0, reason: otherEngineReason(db)) }
        return try index.status(schema: schema)
    }

    /// Builds the index when it is absent or stale, folds pending users in when it is current. Runs its own
    /// write transaction (a savepoint inside one). Throws nothing for an unsupported store: says why instead.
    /// With `rebuild`, a current index is built again from scratch (after a Foundation upgrade changed how
    /// names fold, say).
    @discardableResult
    public static func ensure(_ db: SQLDatabase, schema: AuthSchema, rebuild: Bool = false) throws -> Change {
        guard let index = index(db) else { return .unsupported(otherEngineReason(db)) }
        return try index.ensure(schema: schema, rebuild: rebuild)
    }

    /// Drops every part of the index (for tests, and for a store that must go back to the scan).
    public static func drop(_ db: SQLDatabase, schema: AuthSchema) throws {
        try index(db)?.drop(schema: schema)
    }

    /// `ensure` as an audited change (`accounts.index`, with what was done); nothing is written when the index
    /// is current with no pending users.
    @discardableResult
    public static func ensure(_ store: Store, actor: Actor, rebuild: Bool = false) throws -> Change {
        let before = try status(store.db, schema: store.schema)
        if before.state == .unsupported { return .unsupported(before.reason ?? otherEngineReason(store.db)) }
        let lacking = try index(store.db)?.lacksParts() ?? false
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
}
