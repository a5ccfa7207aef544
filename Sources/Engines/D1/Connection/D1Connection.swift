import Foundation
import Storage

/// A D1 database through Cloudflare's query API: Storage's third engine, SQLite's SQL over HTTPS.
///
/// D1 has no interactive transactions: the statements of one request run as one batch, all or nothing, and
/// `BEGIN`/`SAVEPOINT` are refused. So `write {}` is optimistic. Inside it:
///
/// - a read is sent at once, and what it gave is remembered as guards (`D1Guard.sameRows`);
/// - a write is kept, with a guard after it when the caller expects a number of changed rows;
/// - when the body returns, **one request** carries the guards ahead of the writes. A guard that no longer holds
///   fails the request, which changes nothing; the body then runs again on fresh reads (a few times, then
///   `contention`), so two writers that read the same policy version or audit head cannot both commit.
///
/// A read inside `write {}` of a table the same write already changed cannot be answered before the write is sent,
/// and is refused (`unsupported`) rather than answered from the old rows. `snapshot` and `batch` are one request each
/// (so a page's reads see one state of the database); other reads outside a write are one request per statement.
public final class D1Connection: SQLDatabase {
    public let location: D1Location
    let client: D1Client

    public var dialect: any SQLDialect { D1Dialect() }
    public private(set) var changes = 0
    public var isInTransaction: Bool { pending != nil }
    /// D1 has no read-only connection; a token that may only read is refused at the first write (`permission`).
    public var isReadOnly: Bool { false }
    /// Every request stands alone: there is no connection to lose.
    public var isUsable: Bool { true }
    public var prelude: SnapshotPrelude?
    /// A write's statements are sent when it ends: a read inside it sees the rows as they were, so the caller's own
    /// account of what it wrote is the answer.
    public func rowsAfterWrite<T>(readBack: () throws -> T, asWritten: () throws -> T) throws -> T { try asWritten() }

    /// How many times a write's body runs when its reads keep changing under it.
    static let writeAttempts = 8
    /// The most rows a long job changes in one write (one request): a few hundred statements keep a request well
    /// inside D1's limits on its size and its time.
    public static let rowsPerRequest = 250

    /// What the open `write {}` has read and will write.
    private final class PendingWrite {
        var guards: [D1Statement] = []
        var writes: [D1Statement] = []
        /// For each change-count guard's number: what to throw when it fails.
        var expectations: [Int: Error] = [:]
        var writtenTables: Set<String> = []
        var nextGuard = 1
    }
    private var pending: PendingWrite?

    /// A connection to `location`; each request may take `timeout` seconds (default `GATEHOUSE_D1_TIMEOUT_SECONDS`, 45),
    /// and each operation — a request with its retries and the waits between them — `budget` seconds in all (nil: up
    /// to four tries and a minute of waits).
    public init(location: D1Location, timeout: Double? = nil, budget: Double? = nil) {
        self.location = location
        self.client = D1Client(location: location, timeout: timeout ?? D1Client.defaultTimeout, budget: budget)
    }

    /// Checks that the API answers for this database and the token may read it (one request).
    public func ping() throws {
        _ = try client.run([D1Statement(sql: "SELECT 1")], reads: true)
    }

    // MARK: Statements

    public func execute(_ sql: String, _ arguments: [SQLBindable]) throws {
        try execute(SQLStatement(sql, arguments))
    }

    private func execute(_ statement: SQLStatement) throws {
        forgetCatalog(after: statement.sql)
        let rendered = try D1Statement(statement.sql, statement.arguments.map(\.sqlValue))
        if let pending, !D1Statement.isRead(statement.sql) {
            try keep(rendered, statement, in: pending)
            return
        }
        let result = try run([rendered], reads: D1Statement.isRead(statement.sql))[0]
        changes = result.changes
        try check(statement, changes: result.changes)
    }

    public func executeScript(_ sql: String) throws {
        catalog = Catalog()
        var script = D1Statement(sql: sql)
        script.isScript = true
        if let pending {
            pending.writes.append(script)
            return
        }
        _ = try run([script], reads: false)
    }

    public func forEach(_ sql: String, _ arguments: [SQLBindable], _ body: (Row) throws -> Void) throws {
        for row in try rows(sql, arguments) { try body(row) }
    }

    public func rows(_ sql: String, _ arguments: [SQLBindable]) throws -> [Row] {
        try snapshot([SQLStatement(sql, arguments)])[0]
    }

    public func row(_ sql: String, _ arguments: [SQLBindable]) throws -> Row? {
        try rows(sql, arguments).first
    }

    public func scalar(_ sql: String, _ arguments: [SQLBindable]) throws -> SQLValue {
        try rows(sql, arguments).first.map { $0.values.first ?? .null } ?? .null
    }

    /// The statements in one request (one atomic batch: one state of the database), the prelude first — or none,
    /// when every statement was read ahead (`readAhead`).
    public func snapshot(_ statements: [SQLStatement]) throws -> [[Row]] {
        if statements.isEmpty && prelude == nil { return [] }
        if prelude == nil, let answered = try answerFromReadAhead(statements) { return answered }
        return try answeringPrelude(statements) { statements in
            let rendered = try statements.map { try D1Statement($0.sql, $0.arguments.map(\.sqlValue)) }
            try checkReadsInsideWrite(statements)
            let results = try runCarryingReadAhead(rendered, reads: statements.allSatisfy { D1Statement.isRead($0.sql) })
            guardReads(rendered, results)
            return results.map(Self.rows)
        }
    }

    /// Inside a write, a snapshot only reads, and not a table the same write changed.
    private func checkReadsInsideWrite(_ statements: [SQLStatement]) throws {
        guard let pending else { return }
        for statement in statements {
            guard D1Statement.isRead(statement.sql) else {
                throw D1Error(.unsupported, "a statement that writes was sent as a read to \(location)")
            }
            try refuseReadAfterWrite(statement.sql, pending)
        }
    }

    /// Inside a write: what the reads gave, kept as guards the write's request checks first.
    private func guardReads(_ rendered: [D1Statement], _ results: [D1Client.Result]) {
        guard let pending else { return }
        // A catalog read (`PRAGMA`) is not guarded: a write does not race a schema change.
        for (statement, result) in zip(rendered, results) where !statement.sql.uppercased().hasPrefix("PRAGMA") {
            let guards = D1Guard.sameRows(statement, rows: result.rows, width: result.columns.count, firstNumber: pending.nextGuard)
            pending.nextGuard += guards.count
            pending.guards += guards
        }
    }

    // MARK: Scans

    /// Rows a page of a scan holds (`GATEHOUSE_D1_PAGE_ROWS`, 10 to 100,000; default 10,000: about a megabyte and a
    /// half of user rows, one request each).
    static let pageRows: Int = {
        guard let text = ProcessInfo.processInfo.environment["GATEHOUSE_D1_PAGE_ROWS"], let rows = Int(text) else { return 10_000 }
        return min(max(rows, 10), 100_000)
    }()

    /// Pages through the table by `key` (a unique column) or its rowid: each page is one request, `key > last`,
    /// in key order, `pageRows` rows. A table without a rowid (`WITHOUT ROWID`) and no key given pages by its primary
    /// key when that is one column, and is read in one request only when it is several.
    public func scan(_ table: String, columns: [String], where condition: String?, _ arguments: [SQLBindable], orderedBy key: String?,
                     _ body: (Row) throws -> Void) throws {
        let pageKey = key ?? "rowid"
        var last: SQLValue?
        var names: ColumnIndex?
        while true {
            var conditions = condition.map { ["(\($0))"] } ?? []
            var values = arguments
            if let last {
                conditions.append("\(pageKey) > ?")
                values.append(last)
            }
            let sql = "SELECT \(columns.joined(separator: ", ")), \(pageKey) FROM \(table)"
                + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) + " ORDER BY \(pageKey) LIMIT \(Self.pageRows)"
            let page: [Row]
            do {
                page = try rows(sql, values)
            } catch let error as D1Error where error.kind == .statement && key == nil && last == nil && error.message.contains("no such column") {
                if let primary = try singleColumnPrimaryKey(of: table) {
                    try scan(table, columns: columns, where: condition, arguments, orderedBy: primary, body)
                } else {
                    try forEach(Self.scanStatement(table, columns: columns, where: condition, orderedBy: nil), arguments, body)
                }
                return
            }
            for row in page {
                let index = names ?? ColumnIndex(Array(row.columns.names.dropLast()))
                names = index
                try body(Row(columns: index, values: Array(row.values.dropLast())))
            }
            guard page.count == Self.pageRows, let key = page.last?.values.last, key != .null else { return }
            last = key
        }
    }

    /// The quoted name of the one column that is `table`'s primary key (`table` as a scan's caller quoted it), or nil.
    private func singleColumnPrimaryKey(of table: String) throws -> String? {
        var name = table
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }
        let keys = try columns(of: name).filter { $0.primaryKeyPosition > 0 }
        return keys.count == 1 ? SQL.quote(keys[0].name) : nil
    }

    // MARK: Reads ahead

    /// Reads a caller announced (`readAhead`), not yet sent.
    private var aheadStatements: [D1Statement] = []
    private var aheadTables: [String] = []
    /// What the request that carried them answered, each kept for one use, until `aheadLifetime` has passed or this
    /// connection writes.
    private var aheadAnswers: [D1Statement: D1Client.Result] = [:]
    private var aheadAnsweredAt: UInt64 = 0
    private static let aheadLifetime: UInt64 = 10_000_000_000
    /// Answers offered for the next write (`offer`): taken only inside it, where each is guarded, and dropped once its
    /// body has run, so no read outside a write is ever answered from an older record.
    private var offered: [D1Statement: D1Client.Result] = [:]

    public func readAhead(_ statements: [SQLStatement], columnsOf tables: [String]) {
        // A statement whose arguments D1 cannot take is simply not guessed: the caller's own read reports it.
        aheadStatements += statements.compactMap { statement in
            guard D1Statement.isRead(statement.sql) else { return nil }
            return try? D1Statement(statement.sql, statement.arguments.map(\.sqlValue))
        }
        aheadTables += tables
    }

    /// Every statement's rows from what was read ahead (each answer used once), or nil to ask D1.
    private func answerFromReadAhead(_ statements: [SQLStatement]) throws -> [[Row]]? {
        let offers = pending == nil ? [:] : offered
        guard !(aheadAnswers.isEmpty && offers.isEmpty), !statements.isEmpty else { return nil }
        if DispatchTime.now().uptimeNanoseconds - aheadAnsweredAt >= Self.aheadLifetime { aheadAnswers = [:] }
        guard let rendered = try? statements.map({ try D1Statement($0.sql, $0.arguments.map(\.sqlValue)) }),
              Set(rendered).count == rendered.count else { return nil }
        let results = rendered.compactMap { aheadAnswers[$0] ?? offers[$0] }
        guard results.count == rendered.count else { return nil }
        try checkReadsInsideWrite(statements)
        for statement in rendered where aheadAnswers.removeValue(forKey: statement) == nil { offered[statement] = nil }
        record(rendered, results)
        guardReads(rendered, results)
        return results.map(Self.rows)
    }

    /// Runs `statements`, with the reads announced ahead after them when this request only reads: their answers are
    /// kept, the columns they asked for go to the catalog. A guess D1 refuses (a table or column that is not there)
    /// fails the whole request, which is then sent again without the guesses.
    private func runCarryingReadAhead(_ statements: [D1Statement], reads: Bool) throws -> [D1Client.Result] {
        let known = freshCatalog().columns
        let tables = Array(Set(aheadTables.filter { known[$0] == nil })).sorted()
        let guesses = aheadStatements
        aheadStatements = []
        aheadTables = []
        guard reads, !(tables.isEmpty && guesses.isEmpty) else { return try run(statements, reads: reads) }
        let pragmas = tables.map { D1Statement(sql: "PRAGMA table_info(\(SQL.quote($0)))") }
        var results: [D1Client.Result]
        var answeredGuesses = true
        let refused: D1Error?
        do {
            results = try run(statements + pragmas + guesses, reads: true)
            refused = nil
        } catch {
            results = []
            refused = error
        }
        if let refused {
            guard refused.kind == .statement, !guesses.isEmpty else { throw refused }
            results = try run(statements + pragmas, reads: true)
            answeredGuesses = false
        }
        for (table, result) in zip(tables, results[statements.count..<(statements.count + pragmas.count)]) {
            catalog.columns[table] = Self.columnInfos(Self.rows(result))
        }
        if answeredGuesses {
            for (statement, result) in zip(guesses, results[(statements.count + pragmas.count)...]) { aheadAnswers[statement] = result }
            aheadAnsweredAt = DispatchTime.now().uptimeNanoseconds
        }
        return Array(results.prefix(statements.count))
    }

    /// Outside a write: one request, all or nothing. Inside one: reads are sent at once (and guarded), writes kept.
    public func batch(_ statements: [SQLStatement]) throws -> [SQLBatchResult] {
        if statements.isEmpty { return [] }
        guard let pending else {
            let rendered = try statements.map { try D1Statement($0.sql, $0.arguments.map(\.sqlValue)) }
            let reads = statements.allSatisfy { D1Statement.isRead($0.sql) }
            let results = try run(rendered, reads: reads)
            for (statement, result) in zip(statements, results) { try check(statement, changes: result.changes) }
            changes = results.last?.changes ?? 0
            return results.map { SQLBatchResult(rows: Self.rows($0), changes: $0.changes) }
        }
        var results: [SQLBatchResult] = []
        var reads: [SQLStatement] = []
        func flushReads() throws {
            guard !reads.isEmpty else { return }
            results += try snapshot(reads).map { SQLBatchResult(rows: $0, changes: 0) }
            reads = []
        }
        for statement in statements {
            if D1Statement.isRead(statement.sql) { reads.append(statement); continue }
            try flushReads()
            try keep(try D1Statement(statement.sql, statement.arguments.map(\.sqlValue)), statement, in: pending)
            results.append(SQLBatchResult(rows: [], changes: statement.expectedChanges ?? 0))
        }
        try flushReads()
        return results
    }

    /// Keeps a write for the commit, with its change-count guard when the statement expects one.
    private func keep(_ rendered: D1Statement, _ statement: SQLStatement, in pending: PendingWrite) throws {
        guard !D1Statement.returnsRows(statement.sql) else {
            throw D1Error(.unsupported, "a write on \(location) needs rows back from a statement (RETURNING) before the write is sent, which D1 cannot give; nothing was written")
        }
        pending.writes.append(rendered)
        if let table = D1Statement.writtenTable(statement.sql) { pending.writtenTables.insert(table) }
        if let expectation = statement.expectation {
            let number = pending.nextGuard
            pending.nextGuard += 1
            pending.writes.append(D1Guard.changed(expectation.count, number: number))
            pending.expectations[number] = expectation.failure(nil)
        }
    }

    private func check(_ statement: SQLStatement, changes: Int) throws {
        if let expectation = statement.expectation, expectation.count != changes { throw expectation.failure(changes) }
    }

    private func refuseReadAfterWrite(_ sql: String, _ pending: PendingWrite) throws {
        // The catalog (`PRAGMA table_info`) does not change with a write's rows.
        guard !sql.uppercased().hasPrefix("PRAGMA") else { return }
        for table in pending.writtenTables where D1Statement.mentions(sql, table: table) {
            throw D1Error(.unsupported, "a write on \(location) read \(table) after changing it; D1 cannot answer that before the write is sent (read first, then write)")
        }
    }

    private func run(_ statements: [D1Statement], reads: Bool) throws(D1Error) -> [D1Client.Result] {
        // Nothing to ask: no request (D1 refuses an empty batch).
        if statements.isEmpty { return [] }
        // What was read ahead may no longer be what this connection's own write left.
        if !reads { aheadAnswers = [:] }
        let results = try client.run(statements, reads: reads)
        if let size = results.last?.sizeAfter { databaseSize = size }
        if reads { record(statements, results) }
        return results
    }

    // MARK: Recorded reads

    /// What `recordingReads` has seen answered so far; nil when not recording.
    private var recorded: [D1ReadRecord.Entry]?

    private func record(_ statements: [D1Statement], _ results: [D1Client.Result]) {
        guard recorded != nil else { return }
        for (statement, result) in zip(statements, results) where !statement.isScript {
            recorded?.append(D1ReadRecord.Entry(sql: statement.sql, parameters: statement.params, columns: result.columns,
                                              rows: result.rows.map { $0.map(RecordedValue.init) }))
        }
    }

    /// Every request's reads while `body` runs, with the schema they were made against (nil when this connection
    /// has no fresh copy of it: the record could not be checked later).
    public func recordingReads<T>(_ body: () throws -> T) throws -> (T, ReadRecord?) {
        let outer = recorded
        recorded = []
        defer { recorded = outer }
        let result = try body()
        guard let schema = freshCatalog().schema, let entries = recorded else { return (result, nil) }
        return (result, try? D1ReadRecord(schema: schema, entries: entries).record())
    }

    /// Keeps a record's answers for the next write's body (each used once, and guarded there) when the schema is the
    /// one this connection last read; a record of another schema is left unused, and its reads are asked.
    public func offer(_ record: ReadRecord) {
        offered = [:]
        guard let record = D1ReadRecord(record), let schema = freshCatalog().schema, schema == record.schema else { return }
        for entry in record.entries {
            offered[D1Statement(sql: entry.sql, params: entry.parameters)] =
                D1Client.Result(columns: entry.columns, rows: entry.rows.map { $0.map(\.value) }, changes: 0, sizeAfter: nil)
        }
    }

    /// The database's size in bytes, as the last answer gave it (`meta.size_after`); nil before any.
    public private(set) var databaseSize: Int?

    private static func rows(_ result: D1Client.Result) -> [Row] {
        let index = ColumnIndex(result.columns)
        return result.rows.map { Row(columns: index, values: $0) }
    }

    // MARK: Transactions

    public func write<T>(_ body: () throws -> T) throws -> T {
        if let pending {
            // Nested: a savepoint's effect — its writes dropped if it throws, the outer write going on.
            let writes = pending.writes.count, tables = pending.writtenTables
            do { return try body() } catch {
                pending.writes.removeSubrange(writes...)
                pending.writtenTables = tables
                throw error
            }
        }
        var attempt = 1
        while true {
            let state = PendingWrite()
            pending = state
            let result: T
            do {
                result = try body()
                pending = nil
                offered = [:]
            } catch {
                pending = nil
                offered = [:]
                throw error
            }
            guard !state.writes.isEmpty else { return result }
            let failure: D1Error
            do {
                let results = try run(state.guards + state.writes, reads: false)
                changes = results.last?.changes ?? 0
                return result
            } catch {
                failure = error
            }
            guard failure.kind == .statement, let number = failure.failedGuard else { throw failure }
            if let expected = state.expectations[number] { throw expected }
            guard attempt < Self.writeAttempts else {
                throw D1Error(.contention, "what a write on \(location) read kept changing before the write arrived (\(attempt) tries); nothing was written")
            }
            attempt += 1
            // Another writer committed between this one's reads and its write: read again, after a short pause
            // that spreads writers racing for the same rows.
            Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.05) * Double(attempt))
        }
    }

    /// Runs `body`: each of its reads is a request of its own (D1 has no read transaction across requests; reads
    /// that must agree are sent together with `snapshot`).
    public func read<T>(_ body: () throws -> T) throws -> T {
        try body()
    }

    // MARK: Catalog

    /// What this connection last read of the catalog, kept for `Catalog.lifetime`: a request costs a distance to
    /// Cloudflare, and opening a store asks the same questions every command. Dropped when this connection changes
    /// the schema (a migration, a `CREATE`), and after its lifetime, so a console that runs for days sees an upgrade.
    private struct Catalog {
        static let lifetime: UInt64 = 30_000_000_000
        var tables: Set<String>?
        /// Each table's name and `CREATE` statement, in name order: what a `ReadRecord` was made against.
        var schema: String?
        var columns: [String: [ColumnInfo]] = [:]
        var readAt = DispatchTime.now().uptimeNanoseconds
        var isFresh: Bool { DispatchTime.now().uptimeNanoseconds - readAt < Self.lifetime }
    }
    private var catalog = Catalog()

    /// The catalog as last read, or a new empty one when it is stale.
    private func freshCatalog() -> Catalog {
        if !catalog.isFresh { catalog = Catalog() }
        return catalog
    }

    /// Forgets the catalog after a statement that may change the schema.
    private func forgetCatalog(after sql: String) {
        let head = sql.drop { $0.isWhitespace }.prefix(7).uppercased()
        if head.hasPrefix("CREATE") || head.hasPrefix("DROP") || head.hasPrefix("ALTER") { catalog = Catalog() }
    }

    public func tableExists(_ name: String) throws -> Bool {
        try !existingTables([name]).isEmpty
    }

    /// Every table's name is read once (one request) and kept: later questions about tables cost none.
    public func existingTables(_ names: [String]) throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        return Set(names).intersection(try allTables())
    }

    private func allTables() throws -> Set<String> {
        if let tables = freshCatalog().tables { return tables }
        let rows = try rows("SELECT name, sql FROM sqlite_master WHERE type = 'table'", [])
        let tables = Set(rows.compactMap { $0[0].string })
        catalog.tables = tables
        catalog.schema = rows.compactMap { row in row[0].string.map { "\($0)\t\(row[1].string ?? "")" } }.sorted().joined(separator: "\n")
        return tables
    }

    /// The tables, without D1's own (`_cf_*`, which may not be read) and SQLite's.
    public func tableNames() throws -> [String] {
        try allTables().filter { !$0.hasPrefix("sqlite_") && !$0.hasPrefix("_cf_") }.sorted()
    }

    public func columns(of table: String) throws -> [ColumnInfo] {
        try columns(ofEach: [table])[table] ?? []
    }

    // D1 refuses the pragma table-valued functions (`pragma_table_info(?)`), so the catalog asks with `PRAGMA`
    // statements, the table's name quoted into each, several tables in one request (only those not already known).

    public func columns(ofEach tables: [String]) throws -> [String: [ColumnInfo]] {
        guard !tables.isEmpty else { return [:] }
        let known = freshCatalog().columns
        let missing = Array(Set(tables.filter { known[$0] == nil })).sorted()
        let results = try snapshot(missing.map { SQLStatement("PRAGMA table_info(\(SQL.quote($0)))") })
        for (table, rows) in zip(missing, results) { catalog.columns[table] = Self.columnInfos(rows) }
        var found: [String: [ColumnInfo]] = [:]
        for table in tables { if let columns = catalog.columns[table], !columns.isEmpty { found[table] = columns } }
        return found
    }

    /// A table's columns from its `PRAGMA table_info` rows.
    private static func columnInfos(_ rows: [Row]) -> [ColumnInfo] {
        rows.map {
            ColumnInfo(name: $0["name"].string ?? "", declaredType: $0["type"].string ?? "", notNull: $0["notnull"].int64 == 1,
                       primaryKeyPosition: Int($0["pk"].int64 ?? 0))
        }
    }

    public func foreignKeys(of table: String) throws -> [ForeignKeyInfo] {
        try foreignKeys(ofEach: [table])[table] ?? []
    }

    public func foreignKeys(ofEach tables: [String]) throws -> [String: [ForeignKeyInfo]] {
        guard !tables.isEmpty else { return [:] }
        // Whoever follows a table's keys reads its columns next (a merge's read set): they ride along.
        readAhead([], columnsOf: tables)
        let results = try snapshot(tables.map { SQLStatement("PRAGMA foreign_key_list(\(SQL.quote($0)))") })
        var found: [String: [ForeignKeyInfo]] = [:]
        for (table, rows) in zip(tables, results) where !rows.isEmpty {
            let ordered = rows.sorted { ($0["id"].int64 ?? 0, $0["seq"].int64 ?? 0) < ($1["id"].int64 ?? 0, $1["seq"].int64 ?? 0) }
            found[table] = ordered.map {
                ForeignKeyInfo(table: table, column: $0["from"].string ?? "", referencedTable: $0["table"].string ?? "", referencedColumn: $0["to"].string,
                               onDelete: $0["on_delete"].string ?? "NO ACTION", constraint: String($0["id"].int64 ?? 0), deferrable: true)
            }
        }
        return found
    }

    public func indexes(of table: String) throws -> [IndexInfo] {
        try indexes(ofEach: [table])[table] ?? []
    }

    /// Two requests for any number of tables: every table's index list, then every index's columns.
    public func indexes(ofEach tables: [String]) throws -> [String: [IndexInfo]] {
        let names = Array(Set(tables)).sorted()
        guard !names.isEmpty else { return [:] }
        let lists = try snapshot(names.map { SQLStatement("PRAGMA index_list(\(SQL.quote($0)))") }).map { list in
            list.sorted { ($0["name"].string ?? "") < ($1["name"].string ?? "") }
        }
        let every = lists.flatMap { $0 }
        let keys = every.isEmpty ? [] : try snapshot(every.map { SQLStatement("PRAGMA index_xinfo(\(SQL.quote($0["name"].string ?? "")))") })
        var found: [String: [IndexInfo]] = [:]
        var offset = 0
        for (table, list) in zip(names, lists) {
            found[table] = zip(list, keys[offset..<(offset + list.count)]).map { index, info in
                let keys = info.filter { $0["key"].int64 == 1 }.sorted { ($0["seqno"].int64 ?? 0) < ($1["seqno"].int64 ?? 0) }
                return IndexInfo(name: index["name"].string ?? "", columns: keys.map { $0["name"].string ?? "" }, unique: index["unique"].int64 == 1,
                                 leadingColumnByteOrdered: (keys.first?["coll"].string ?? "BINARY").uppercased() == "BINARY")
            }
            offset += list.count
        }
        return found
    }

    /// D1 has no schemas another role could add.
    /// D1 tables have rowids, but a merge names rows by primary key here: a rowid given back by an undo would need a
    /// read of the rows the same write restores, which a D1 write cannot make (`rowsAfterWrite`).
    public func rowidNamesRows(of table: String) throws -> Bool { false }
    /// The API token decides, and a refused `CREATE INDEX` says so.
    public func mayCreateIndex(on table: String) throws -> Bool { true }
    public func schemaShadows(prefix: String) throws -> [SchemaShadow] { [] }
}
