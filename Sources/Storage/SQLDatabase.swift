/// Storage's engine boundary: the one interface the domain reads and writes a store through.
///
/// Each engine conforms in its own target (`Sources/Engines/<Engine>/Connection/`), and the domain never asks which
/// one it holds. What differs between engines lives in each conformance and in its `SQLDialect`, not in features:
///
/// - statements are written once with `?` placeholders; an engine that numbers them (`$1`, `$2`, …) does so itself;
/// - a value binds by the type the engine infers for its place: an integer 1 bound where the engine expects a
///   native `boolean` goes as `true`, so Better Auth's boolean columns need no per-engine code;
/// - `write` is the engine's way of making writers take turns (a write lock taken up front, or a transaction-scoped
///   advisory lock), so a read-then-append inside one `write` is never interleaved with another Gatehouse writer's;
/// - the catalog (`tableExists`, `tableNames`, `columns(of:)`, `foreignKeys(of:)`, `indexes(of:)`) reads the
///   engine's own catalog.
///
///     func countUsers(_ db: SQLDatabase) throws -> Int64 {
///         try db.scalar("SELECT count(*) FROM \(db.dialect.quote("user"))").int64 ?? 0
///     }
public protocol SQLDatabase: AnyObject {
    /// How this engine spells what SQL leaves to each engine.
    var dialect: any SQLDialect { get }
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { get }
    /// Whether the store refuses writes on this connection (a read-only file, or a standby server).
    var isReadOnly: Bool { get }
    /// Whether the connection can take the next statement; a pool drops one that cannot (a server connection that
    /// was cut off) and opens a new one. A file connection always can.
    var isUsable: Bool { get }
    /// A statement the next `snapshot` answers ahead of its own, in the same snapshot and round trip (`SnapshotPrelude`).
    var prelude: SnapshotPrelude? { get set }
    /// The deadline of the operation this connection serves, for every wait on a lock (`WaitDeadline`): each wait
    /// gets only what is left of it, never more than the busy timeout. Nil: each wait gets the busy timeout.
    var waitDeadline: WaitDeadline? { get set }

    /// Runs one statement that returns no rows.
    func execute(_ sql: String, _ arguments: [SQLBindable]) throws
    /// Runs a script of several statements (a migration). Takes no arguments.
    func executeScript(_ sql: String) throws
    /// Calls `body` for every result row.
    func forEach(_ sql: String, _ arguments: [SQLBindable], _ body: (Row) throws -> Void) throws
    /// All result rows.
    func rows(_ sql: String, _ arguments: [SQLBindable]) throws -> [Row]
    /// The first result row, if any.
    func row(_ sql: String, _ arguments: [SQLBindable]) throws -> Row?
    /// The first column of the first row, or `.null`.
    func scalar(_ sql: String, _ arguments: [SQLBindable]) throws -> SQLValue

    /// Runs `body` in a write transaction with this engine's writer turn taken up front; commits when `body`
    /// returns, rolls back when it throws. Nested calls become savepoints.
    func write<T>(_ body: () throws -> T) throws -> T
    /// Inside `write {}`: the rows as this write left them. Where a read inside a write sees the write's own rows (a
    /// transaction on the server), `readBack` reads them; where it cannot (D1, whose writes are sent together when
    /// the write ends), `asWritten` works them out from what the caller wrote.
    func rowsAfterWrite<T>(readBack: () throws -> T, asWritten: () throws -> T) throws -> T
    /// Runs `body` in a read transaction: every query in it sees one snapshot of the store.
    func read<T>(_ body: () throws -> T) throws -> T
    /// The rows of each statement, in order, all read from one snapshot of the store (the caller's transaction
    /// when one is open, else a read transaction of their own). The statements must not depend on each other's
    /// results, and each returns few rows: Postgres sends them all at once, in one round trip to the server.
    func snapshot(_ statements: [SQLStatement]) throws -> [[Row]]
    /// Runs the statements in order and returns each one's rows and changed-row count; a failing statement stops
    /// the batch (those after it do not run) and its error is thrown. Meant for many small statements inside a
    /// transaction, none depending on another's result: Postgres sends them in a few round trips, not one each.
    func batch(_ statements: [SQLStatement]) throws -> [SQLBatchResult]

    /// Whether a table of this name (exact case, unqualified) exists where the connection's queries look.
    func tableExists(_ name: String) throws -> Bool
    /// Which of these tables exist (as `tableExists` finds them), in one question to the engine.
    func existingTables(_ names: [String]) throws -> Set<String>
    /// The tables' names, sorted.
    func tableNames() throws -> [String]
    /// The columns of a table, in order; empty when there is no such table.
    func columns(of table: String) throws -> [ColumnInfo]
    /// The foreign keys declared on a table, one entry per referencing column.
    func foreignKeys(of table: String) throws -> [ForeignKeyInfo]
    /// `columns(of:)` of each table (tables that do not exist left out), in one question to the engine.
    func columns(ofEach tables: [String]) throws -> [String: [ColumnInfo]]
    /// `foreignKeys(of:)` of each table (tables without any left out), in one question to the engine.
    func foreignKeys(ofEach tables: [String]) throws -> [String: [ForeignKeyInfo]]
    /// The indexes on a table with their key columns in order (an expression's column is named `""`).
    func indexes(of table: String) throws -> [IndexInfo]
    /// `indexes(of:)` for each table (D1: two requests for them all), keyed by table name.
    func indexes(ofEach tables: [String]) throws -> [String: [IndexInfo]]
    /// Whether `table`'s rows each have a rowid that names the row for good, which a merge's undo writes back as it was
    /// (a SQLite table but a `WITHOUT ROWID` one); false where rows are named by their primary key.
    func rowidNamesRows(of table: String) throws -> Bool
    /// Whether this connection's role may create indexes on `table` (on a server, it owns the table).
    func mayCreateIndex(on table: String) throws -> Bool
    /// Schemas and tables named like Gatehouse's (`prefix`) that its statements do not reach but another role could
    /// have meant them to; empty on an engine without schemas.
    func schemaShadows(prefix: String) throws -> [SchemaShadow]

    /// A hint: reads the caller is about to make — the rows of `statements` (each asked later on its own or in a
    /// `snapshot`, exactly as given here) and the columns of `tables`. An engine that pays a request for each
    /// question (D1) sends them with its next request and answers them from what it got, once each and for a few
    /// seconds; a wrong guess (a table or column that is not there) costs the caller nothing but the guess, since the
    /// statement is then asked again when the caller asks it. An engine in the same process, or one whose round trip
    /// is cheap, ignores it.
    func readAhead(_ statements: [SQLStatement], columnsOf tables: [String])

    /// Runs `body` and gives back what its reads answered, on an engine that cannot hold a transaction open across
    /// requests (D1), so that a later write of the same rows can `offer` them; nil on the others.
    func recordingReads<T>(_ body: () throws -> T) throws -> (T, ReadRecord?)
    /// Answers recorded earlier (`recordingReads`), offered to the next `write`: D1 takes each as the answer to the
    /// same read inside it and checks it in the write's own request (a guard that fails the request, changing
    /// nothing, when the rows moved since; the write then runs again on fresh reads), so the write costs no reads of
    /// its own. Ignored when the schema changed since the record, and by the engines that read inside their
    /// transaction.
    func offer(_ record: ReadRecord)

    /// Calls `body` for every row of a whole-table scan: `SELECT columns FROM table [WHERE condition]`, in the order
    /// of `orderedBy` (a unique column) or, when nil, in the table's own order. `table`, `columns` and `condition` are
    /// SQL as the caller quoted it. An engine that answers in requests (D1) pages through the table by that key (or
    /// its row key), a bounded page a request, so no answer is unbounded and no more than a page is held at a time;
    /// the others run the one statement and stream its rows.
    func scan(_ table: String, columns: [String], where condition: String?, _ arguments: [SQLBindable], orderedBy key: String?,
              _ body: (Row) throws -> Void) throws
}

/// One statement and its arguments, for `SQLDatabase.snapshot` and `SQLDatabase.batch`.
public struct SQLStatement {
    public let sql: String
    public let arguments: [SQLBindable]
    /// For a write: the number of rows it must change, and what to throw when it changes another number
    /// (`SQLDatabase.checkedBatch`). An engine that sends a write's statements later (D1) checks it where the
    /// statement runs, so the whole write changes nothing.
    public let expectation: ChangeExpectation?

    public init(_ sql: String, _ arguments: [SQLBindable] = [], expecting expectation: ChangeExpectation? = nil) {
        self.sql = sql
        self.arguments = arguments
        self.expectation = expectation
    }

    /// The number of rows the statement must change, if it must.
    public var expectedChanges: Int? { expectation?.count }
}

/// The number of rows a write statement must change, and the error when it does not: called with the number it
/// changed when the engine knows it at once, nil when the engine found out only that it differed (D1's guards).
public struct ChangeExpectation {
    public let count: Int
    public let failure: (Int?) -> Error

    public init(count: Int, failure: @escaping (Int?) -> Error) {
        self.count = count
        self.failure = failure
    }
}

/// What one statement of `SQLDatabase.batch` gave back.
public struct SQLBatchResult {
    public let rows: [Row]
    /// Rows changed by it, when it was an INSERT, UPDATE or DELETE.
    public let changes: Int

    public init(rows: [Row], changes: Int) {
        self.rows = rows
        self.changes = changes
    }
}

/// A column as the engine's catalog describes it.
public struct ColumnInfo: Sendable, Equatable {
    public let name: String
    public let declaredType: String
    public let notNull: Bool
    public let primaryKeyPosition: Int

    public init(name: String, declaredType: String, notNull: Bool, primaryKeyPosition: Int) {
        self.name = name
        self.declaredType = declaredType
        self.notNull = notNull
        self.primaryKeyPosition = primaryKeyPosition
    }
}

/// One column of a foreign key as the engine's catalog describes it (a composite key is one entry per column, all
/// with the same `constraint`).
public struct ForeignKeyInfo: Sendable, Equatable {
    public let table: String
    public let column: String
    public let referencedTable: String
    /// Nil when the key references the parent's primary key implicitly.
    public let referencedColumn: String?
    public let onDelete: String
    /// Names the key the column belongs to: SQLite's key number, Postgres's constraint name.
    public let constraint: String
    /// Whether a transaction can put the key's check off to its commit (`SQLDialect.deferForeignKeys`): every key
    /// on SQLite (`defer_foreign_keys` defers them all), a key declared `DEFERRABLE` on Postgres (the others are
    /// checked at the end of each statement).
    public let deferrable: Bool

    public init(table: String, column: String, referencedTable: String, referencedColumn: String?, onDelete: String, constraint: String,
                deferrable: Bool) {
        self.table = table
        self.column = column
        self.referencedTable = referencedTable
        self.referencedColumn = referencedColumn
        self.onDelete = onDelete
        self.constraint = constraint
        self.deferrable = deferrable
    }
}

/// An index as the engine's catalog describes it.
public struct IndexInfo: Sendable, Equatable {
    public let name: String
    public let columns: [String]
    public let unique: Bool
    /// Whether its first column is ordered by bytes (SQLite's BINARY, Postgres's "C"/"POSIX" collation), so that a
    /// range `column >= prefix AND column < bound` written with `SQLDialect.byteOrdered` can be read from it.
    public let leadingColumnByteOrdered: Bool

    public init(name: String, columns: [String], unique: Bool, leadingColumnByteOrdered: Bool = true) {
        self.name = name
        self.columns = columns
        self.unique = unique
        self.leadingColumnByteOrdered = leadingColumnByteOrdered
    }
}

extension SQLDatabase {
    public func execute(_ sql: String) throws { try execute(sql, []) }
    public func forEach(_ sql: String, _ body: (Row) throws -> Void) throws { try forEach(sql, [], body) }
    public func rows(_ sql: String) throws -> [Row] { try rows(sql, []) }
    public func row(_ sql: String) throws -> Row? { try row(sql, []) }
    public func scalar(_ sql: String) throws -> SQLValue { try scalar(sql, []) }

    /// A transaction on the server sees its own writes: read them back.
    public func rowsAfterWrite<T>(readBack: () throws -> T, asWritten: () throws -> T) throws -> T { try readBack() }

    /// An engine whose waits this process does not bound with a deadline keeps none.
    public var waitDeadline: WaitDeadline? {
        get { nil }
        set {}
    }

    /// One statement after another in a read transaction (an engine in the same process pays nothing per statement).
    public func snapshot(_ statements: [SQLStatement]) throws -> [[Row]] {
        try answeringPrelude(statements) { statements in try read { try statements.map { try rows($0.sql, $0.arguments) } } }
    }

    /// One statement after another.
    public func batch(_ statements: [SQLStatement]) throws -> [SQLBatchResult] {
        try statements.map { SQLBatchResult(rows: try rows($0.sql, $0.arguments), changes: changes) }
    }

    /// `batch`, then each statement's `expectation` checked: the first that changed another number of rows throws
    /// its error (inside a write, which then changes nothing). Meant for writes inside `write {}`.
    public func checkedBatch(_ statements: [SQLStatement]) throws -> [SQLBatchResult] {
        let results = try batch(statements)
        for (statement, result) in zip(statements, results) {
            if let expectation = statement.expectation, expectation.count != result.changes { throw expectation.failure(result.changes) }
        }
        return results
    }

    /// Runs one write that must change exactly `count` rows, else throws `failure` (see `checkedBatch`).
    public func execute(_ sql: String, _ arguments: [SQLBindable], expecting expectation: ChangeExpectation) throws {
        _ = try checkedBatch([SQLStatement(sql, arguments, expecting: expectation)])
    }

    /// `columns(of:)` for each table.
    public func columns(ofEach tables: [String]) throws -> [String: [ColumnInfo]] {
        var found: [String: [ColumnInfo]] = [:]
        for table in tables { let columns = try columns(of: table); if !columns.isEmpty { found[table] = columns } }
        return found
    }

    /// `foreignKeys(of:)` for each table.
    public func foreignKeys(ofEach tables: [String]) throws -> [String: [ForeignKeyInfo]] {
        var found: [String: [ForeignKeyInfo]] = [:]
        for table in tables { let keys = try foreignKeys(of: table); if !keys.isEmpty { found[table] = keys } }
        return found
    }

    /// One table at a time.
    public func indexes(ofEach tables: [String]) throws -> [String: [IndexInfo]] {
        var found: [String: [IndexInfo]] = [:]
        for table in Set(tables) { found[table] = try indexes(of: table) }
        return found
    }

    /// `tableExists` for each name.
    public func existingTables(_ names: [String]) throws -> Set<String> {
        Set(try names.filter { try tableExists($0) })
    }

    /// Nothing to gain: each question costs what it would cost later.
    public func readAhead(_ statements: [SQLStatement], columnsOf tables: [String]) {}

    /// Nothing to record: a write reads inside its own transaction.
    public func recordingReads<T>(_ body: () throws -> T) throws -> (T, ReadRecord?) { (try body(), nil) }
    public func offer(_ record: ReadRecord) {}

    /// One statement, its rows streamed.
    public func scan(_ table: String, columns: [String], where condition: String?, _ arguments: [SQLBindable], orderedBy key: String?,
                     _ body: (Row) throws -> Void) throws {
        try forEach(Self.scanStatement(table, columns: columns, where: condition, orderedBy: key), arguments, body)
    }

    /// The statement of `scan`.
    public static func scanStatement(_ table: String, columns: [String], where condition: String?, orderedBy key: String?) -> String {
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)"
        if let condition { sql += " WHERE \(condition)" }
        if let key { sql += " ORDER BY \(key)" }
        return sql
    }
}

/// The transaction shape every engine shares: `begin`, then `COMMIT` when the body returns and `ROLLBACK` when it
/// throws; inside an open transaction, a savepoint instead (released, or rolled back to and released). Each
/// connection owns one, which counts its savepoints.
package final class TransactionNesting {
    private var depth = 0

    /// Runs `body` in a transaction on `db` opened with `begin`. `beforeCommit` may refuse to commit (Postgres's
    /// transaction aborted by a statement whose error was caught).
    package init() {}

    package func run<T>(on db: SQLDatabase, begin: String, beforeCommit: () throws -> Void = {}, _ body: () throws -> T) throws -> T {
        if db.isInTransaction {
            depth += 1
            let name = "gatehouse_sp\(depth)"
            defer { depth -= 1 }
            try db.executeScript("SAVEPOINT \(name)")
            do {
                let result = try body()
                try db.executeScript("RELEASE SAVEPOINT \(name)")
                return result
            } catch {
                try? db.executeScript("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
                throw error
            }
        }
        try db.executeScript(begin)
        do {
            let result = try body()
            try beforeCommit()
            try db.executeScript("COMMIT")
            return result
        } catch {
            if db.isInTransaction { try? db.executeScript("ROLLBACK") }
            throw error
        }
    }
}

/// What SQL leaves to each engine: every answer a statement may need that the engines spell differently. Each engine
/// conforms once, in its own target, and its connections hand it out (`SQLDatabase.dialect`); there is no default, so
/// an engine that leaves one out does not compile.
///
/// Gatehouse's statements are written in the SQL every engine accepts (`ON CONFLICT … DO NOTHING|UPDATE`,
/// `RETURNING`, `CASE`, `||`, `coalesce`, `lower`, `substr`, `length`, `CAST(… AS …)`); where they cannot be, a
/// statement asks its connection's dialect.
///
///     let newest = "SELECT id FROM \(SQL.quote("user")) ORDER BY \(db.dialect.byteOrdered("email")) LIMIT 1"
public protocol SQLDialect: Sendable {
    /// The engine's name as an operator reads it ("SQLite", "Postgres").
    var name: String { get }
    /// The folder of `migrations/` this engine's migrations are read from (an engine that speaks another's SQL, as D1
    /// speaks SQLite's, names that one's).
    var migrationsFolder: String { get }
    /// Whether a column declared `timestamp`, `timestamptz` or `date` holds the engine's own date values, so its
    /// encoding follows from the declaration; where a declared type is only an affinity (SQLite), the encoding is
    /// judged from a stored value.
    var nativeTimestamps: Bool { get }
    /// `expression` compared and sorted by its bytes (UTF-8 code point order), whatever the column's collation. A
    /// prefix range is only right in byte order, and only an index in the same order serves it.
    func byteOrdered(_ expression: String) -> String
    /// The last `count` characters of `text` (all of it when it is shorter), reading each value once.
    func suffix(_ text: String, count: String) -> String
    /// The clause that locks the rows a `SELECT` reads until the transaction ends, so that no other writer changes
    /// them between this read and the writes that rely on it (empty where the write transaction already keeps every
    /// other writer out).
    var lockingRead: String { get }
    /// What an `INSERT … (columns)` puts before `VALUES` to give back a row exactly as it was, identity columns
    /// included (empty where no column refuses a given value).
    var insertAsItWas: String { get }
    /// The statement that defers foreign-key checks to the commit, for a transaction that moves rows between parents.
    var deferForeignKeys: String { get }
    /// A column every table has that names one row within one read transaction, as an integer once read through
    /// `rowLocator(_:)`. For re-reading a row found by a scan in the same snapshot; not a key to keep.
    var rowLocatorColumn: String { get }
    /// The condition that finds the row `rowLocator(_:)` made, with one `?` for `rowLocatorArgument(_:)`.
    var rowLocatorCondition: String { get }
    /// The row locator read from `rowLocatorColumn`, as one integer.
    func rowLocator(_ value: SQLValue) -> Int64?
    /// The value to bind to `rowLocatorCondition` for a locator `rowLocator(_:)` made.
    func rowLocatorArgument(_ locator: Int64) -> SQLValue
    /// How an index finds the values of a text column by their end, or nil where Gatehouse makes none (a lookup then
    /// compares the end of every value).
    var suffixIndex: SuffixIndex? { get }
    /// The index method for a column whose values may be longer than a B-tree entry holds (`hash`), or nil where the
    /// default index holds any value.
    var longValueIndexMethod: String? { get }
    /// The operator that matches a `LIKE` pattern whatever the letters' case (`LIKE` where it ignores ASCII case,
    /// `ILIKE`); the column stays bare, so the engine keeps its statistics and its index order for it.
    var likeIgnoringCase: String { get }
    /// The most values one statement may bind, or nil where it is beyond what a caller binds (thousands).
    var maxBoundParameters: Int? { get }
}

/// An index on the end of a text column's values, as an engine can build one: what finds a value that ends with a
/// given string.
public struct SuffixIndex: Sendable {
    /// How the index is read.
    public enum Lookup: Sendable {
        /// The key is the value's last `length` characters reversed, in byte order: a value ends with a string when
        /// its key starts with the string reversed, a range of the index. A string of `length` characters or more is
        /// compared with every value.
        case reversedRange
        /// The key is the value's last `length` characters as they are: a value ends with a string of `length`
        /// characters or more when its key equals the string's last `length`, each candidate then checked whole. A
        /// shorter string is compared with every value.
        case tailEquality
    }

    public let lookup: Lookup
    /// How many characters of a value, from its end, the key keeps (counted as code points).
    public let length: Int
    /// The key of `column` (quoted), as the index and the statements that read it both spell it: the planner
    /// matches them as written.
    public let key: @Sendable (String) -> String

    public init(lookup: Lookup, length: Int, key: @escaping @Sendable (String) -> String) {
        self.lookup = lookup
        self.length = length
        self.key = key
    }
}

extension SQLDialect {
    /// Quotes an identifier (`user` → `"user"`): standard SQL, the same on every engine (`SQL.quote`).
    public func quote(_ identifier: String) -> String { SQL.quote(identifier) }
}

/// What every engine spells alike.
public enum SQL {
    /// Quotes an identifier (`user` → `"user"`): standard SQL, which every engine reads alike.
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

extension SQLDatabase {
    /// Rolls back a transaction a caller left open (a bug in the caller) before the connection is used again, so it
    /// keeps no locks. For pools.
    public func rollBackAbandonedTransaction() {
        if isInTransaction { try? executeScript("ROLLBACK") }
    }
}
