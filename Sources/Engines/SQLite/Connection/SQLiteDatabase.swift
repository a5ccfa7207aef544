import CSQLite
import Storage

/// One SQLite connection.
///
/// A `SQLiteDatabase` is used by one thread at a time: it is deliberately not `Sendable`. Code that runs on
/// several threads (the console) checks connections out of a `DatabasePool`.
///
///     let db = try SQLiteDatabase(path: "store.sqlite")
///     try db.write {
///         try db.execute("INSERT INTO gatehouse_audit(action) VALUES (?)", ["init"])
///     }
///     let count = try db.scalar("SELECT count(*) FROM user").int64
public final class SQLiteDatabase: SQLDatabase {
    /// How to open a connection.
    public struct Options: Sendable {
        /// Create the file if it does not exist.
        public var create: Bool
        /// Open read-only.
        public var readOnly: Bool
        /// How long to wait for another connection's lock before failing with SQLITE_BUSY.
        public var busyTimeoutMilliseconds: Int32
        /// Switch the file to write-ahead logging so that readers never block the writer.
        public var journalModeWAL: Bool
        /// Statements kept prepared, keyed by SQL text.
        public var statementCacheSize: Int
        /// Open read-only as an immutable file (`?immutable=1`): no locks, no `-shm`, no WAL recovery. Only for a
        /// file nothing can change, such as one on a read-only filesystem, where a WAL database cannot otherwise be
        /// opened at all (SQLite cannot create its `-shm` file there).
        public var immutable: Bool = false
        /// Open a new, empty in-memory database instead of the file; `path` then only names it in messages (an
        /// offline copy loaded from a dump).
        public var inMemory: Bool = false
        /// Open the in-memory database `path` names, shared by every connection of this process that names it, and
        /// kept while one of them is open (`file:NAME?mode=memory&cache=shared`).
        public var sharedInMemory: Bool = false

        public init(create: Bool = false, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 15_000,
                    journalModeWAL: Bool = true, statementCacheSize: Int = 64) {
            self.create = create
            self.readOnly = readOnly
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.journalModeWAL = journalModeWAL
            self.statementCacheSize = statementCacheSize
        }
    }

    /// Process-wide settings made once, before the first connection initialises SQLite: no memory statistics
    /// (their global mutex is taken on every allocation of every connection, the console's threads contending).
    private static let configureLibrary: Void = { _ = gatehouse_sqlite_disable_memstatus() }()

    /// The file this connection reads and writes.
    public let path: String
    public var dialect: any SQLDialect { SQLiteDialect() }
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    private let cacheSize: Int
    private let transactions = TransactionNesting()
    /// The busy handler's state: the busy timeout and the operation's deadline.
    private let busyWait: SQLiteBusyWait

    /// The operation's deadline for lock waits (`WaitDeadline`): a wait for another connection's lock stops at it or
    /// after the busy timeout, whichever comes first; a wait that runs out spends it.
    public var waitDeadline: WaitDeadline? {
        get { busyWait.deadline }
        set { busyWait.deadline = newValue }
    }

    /// The longest one wait for another connection's lock lasts (its busy handler's; `PRAGMA busy_timeout` reads 0).
    public var busyTimeoutMilliseconds: Int { busyWait.milliseconds }

    /// Opens (and with `options.create`, creates) the database at `path`, with foreign keys on,
    /// a busy timeout, and WAL journaling. Throws a `DatabaseError` for a file that is not a database.
    public init(path: String, options: Options = Options()) throws {
        SQLiteDatabase.configureLibrary
        self.path = path
        self.cacheSize = options.statementCacheSize
        busyWait = SQLiteBusyWait(milliseconds: Int(options.busyTimeoutMilliseconds))
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var name = options.inMemory ? ":memory:" : path
        if options.sharedInMemory {
            flags |= SQLITE_OPEN_URI
            name = "file:" + path.replacingPercentSpecials() + "?mode=memory&cache=shared"
        } else if options.immutable && !options.inMemory {
            flags |= SQLITE_OPEN_URI
            name = "file:" + path.replacingPercentSpecials() + "?immutable=1"
        }
        if options.readOnly || options.immutable {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.create { flags |= SQLITE_OPEN_CREATE }
        }
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(name, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let error = DatabaseError(connection: connection, code: code, sql: nil, path: path)
            sqlite3_close_v2(connection)
            throw error
        }
        handle = connection
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_handler(connection, SQLiteBusyWait.handler, Unmanaged.passUnretained(busyWait).toOpaque())
        do {
            // Reading the schema forces SQLite to look at the file: a non-database fails here, not later.
            _ = try scalar("PRAGMA schema_version")
            try execute("PRAGMA foreign_keys = ON")
            if options.journalModeWAL && !isReadOnly { try switchToWAL() }
        } catch {
            cache.removeAll()
            sqlite3_close_v2(connection)
            throw error
        }
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The journal mode: `wal`, `delete`, `truncate`, `persist`, `memory` or `off`.
    public func journalMode() throws -> String {
        (try scalar("PRAGMA journal_mode").string ?? "").lowercased()
    }

    /// Switches the file to write-ahead logging (readers never block the writer) with `synchronous = NORMAL`.
    /// An in-memory database keeps its `memory` journal. Returns whether the file's mode changed.
    @discardableResult
    public func switchToWAL() throws -> Bool {
        let before = try journalMode()
        let mode = (try scalar("PRAGMA journal_mode = WAL").string ?? "").lowercased()
        if mode != "wal" && mode != "memory" {
            throw DatabaseError(code: SQLITE_ERROR, message: "could not switch to WAL journaling (got \(mode))", path: path)
        }
        try execute("PRAGMA synchronous = NORMAL")
        return before != mode
    }

    /// Whether SQLite opened the file read-only (asked for, or the file or its folder is not writable).
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// A file connection stays usable: there is no server to lose.
    public var isUsable: Bool { true }

    /// A file has no schemas another role could add: nothing can shadow a table.
    /// Every table has a lasting rowid but a `WITHOUT ROWID` one, as its DDL in `sqlite_master` says.
    public func rowidNamesRows(of table: String) throws -> Bool {
        let ddl = try scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).string ?? ""
        return !ddl.uppercased().replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression).contains("WITHOUT ROWID")
    }
    /// Whoever may write the file may index it.
    public func mayCreateIndex(on table: String) throws -> Bool { true }

    public func schemaShadows(prefix: String) throws -> [SchemaShadow] { [] }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    public var prelude: SnapshotPrelude?

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    func error(_ code: Int32, sql: String?) -> DatabaseError {
        DatabaseError(connection: handle, code: code, sql: sql, path: path)
    }

    /// A cached prepared statement for `sql`. A cached statement that is still being stepped (the same SQL run
    /// inside a `forEach` over it) is never handed out again, which would reset the outer cursor: the inner use
    /// gets a statement of its own, prepared for it and not cached.
    public func statement(_ sql: String) throws -> Statement {
        if let cached = cache[sql] {
            guard cached.isStepping else { return cached }
            return try Statement(database: self, sql: sql)
        }
        let statement = try Statement(database: self, sql: sql)
        if cache.count >= cacheSize { cache.removeAll(keepingCapacity: true) }
        cache[sql] = statement
        return statement
    }

    /// Runs one statement that returns no rows.
    public func execute(_ sql: String, _ arguments: [SQLBindable]) throws {
        try statement(sql).execute(arguments.map(\.sqlValue))
    }

    /// Runs a script of several statements (a migration). Takes no arguments.
    public func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw DatabaseError(code: code & 0xff, extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql, path: path)
        }
    }

    /// Calls `body` for every result row, without materialising the result.
    public func forEach(_ sql: String, _ arguments: [SQLBindable], _ body: (Row) throws -> Void) throws {
        let statement = try statement(sql)
        try statement.bind(arguments.map(\.sqlValue))
        defer { statement.reset() }
        while try statement.step() { try body(statement.row()) }
    }

    /// All result rows.
    public func rows(_ sql: String, _ arguments: [SQLBindable]) throws -> [Row] {
        var rows: [Row] = []
        try forEach(sql, arguments) { rows.append($0) }
        return rows
    }

    /// The first result row, if any.
    public func row(_ sql: String, _ arguments: [SQLBindable]) throws -> Row? {
        let statement = try statement(sql)
        try statement.bind(arguments.map(\.sqlValue))
        defer { statement.reset() }
        return try statement.step() ? statement.row() : nil
    }

    /// The first column of the first row, or `.null`.
    public func scalar(_ sql: String, _ arguments: [SQLBindable]) throws -> SQLValue {
        let statement = try statement(sql)
        try statement.bind(arguments.map(\.sqlValue))
        defer { statement.reset() }
        return try statement.step() ? statement.value(at: 0) : .null
    }

    /// Runs `body` in a write transaction: `BEGIN IMMEDIATE` takes the write lock up front, so the
    /// transaction can never fail half-way with a busy error that no timeout cures. Commits when
    /// `body` returns, rolls back when it throws. Nested calls become savepoints.
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction, so that every query sees one snapshot of the store.
    @discardableResult
    public func read<T>(_ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN DEFERRED", body)
    }

    private func transaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        try transactions.run(on: self, begin: begin, body)
    }

    /// Names of the tables in the main schema.
    public func tableNames() throws -> [String] {
        try rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .compactMap { $0[0].string }
    }

    /// Whether a table exists.
    public func tableExists(_ name: String) throws -> Bool {
        try scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [name]).int64 ?? 0 > 0
    }

    /// The columns of a table, in order.
    public func columns(of table: String) throws -> [ColumnInfo] {
        try rows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [table]).map {
            ColumnInfo(name: $0[0].string ?? "", declaredType: $0[1].string ?? "", notNull: $0[2].int64 == 1, primaryKeyPosition: Int($0[3].int64 ?? 0))
        }
    }

    /// The foreign keys declared on a table.
    public func foreignKeys(of table: String) throws -> [ForeignKeyInfo] {
        try rows("SELECT \"table\", \"from\", \"to\", on_delete, id FROM pragma_foreign_key_list(?) ORDER BY id, seq", [table]).map {
            ForeignKeyInfo(table: table, column: $0[1].string ?? "", referencedTable: $0[0].string ?? "",
                           referencedColumn: $0[2].string, onDelete: $0[3].string ?? "NO ACTION", constraint: String($0[4].int64 ?? 0),
                           deferrable: true)
        }
    }

    /// The indexes on a table, from `pragma_index_list` and `pragma_index_xinfo`.
    public func indexes(of table: String) throws -> [IndexInfo] {
        try rows("SELECT name, \"unique\" FROM pragma_index_list(?) ORDER BY name", [table]).map { index in
            let name = index[0].string ?? ""
            let keys = try rows("SELECT name, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", [name])
            return IndexInfo(name: name, columns: keys.map { $0[0].string ?? "" }, unique: index[1].int64 == 1,
                             leadingColumnByteOrdered: (keys.first?[1].string ?? "BINARY").uppercased() == "BINARY")
        }
    }

    /// Quotes an identifier for SQL (`user` → `"user"`).
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

private extension String {
    /// The path with the characters a URI filename gives meaning to (`%`, `?`, `#`) percent-encoded.
    func replacingPercentSpecials() -> String {
        var out = ""
        for char in self {
            switch char {
            case "%": out += "%25"
            case "?": out += "%3f"
            case "#": out += "%23"
            default: out.append(char)
            }
        }
        return out
    }
}
