import CLibPQ
import Glibc
import Storage

/// One connection to a Postgres server, through libpq (loaded on first use).
///
/// Like `SQLiteDatabase`, a connection is used by one thread at a time and is deliberately not `Sendable`. Parameters are
/// written `?` (numbered `$1`, `$2`, … before preparing) or `$1`, `$2`, …; each statement is prepared once, and each
/// `SQLValue` is sent as the type the server inferred for its place (see `run`); results come back as `Row`s, read
/// by column name.
///
///     let db = try PostgresConnection(uri: "postgresql://gatehouse@/auth?host=/var/run/postgresql")
///     try db.write {
///         try db.execute("INSERT INTO gatehouse_audit(action) VALUES (?)", ["init"])
///     }
///     let count = try db.scalar("SELECT count(*) FROM \"user\"").int64
public final class PostgresConnection: SQLDatabase, CustomStringConvertible {
    /// How much a transaction sees of others running at the same time.
    public enum IsolationLevel: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        /// Fails with `isSerializationFailure` (40001) rather than let a concurrent transaction's effect be lost.
        case serializable = "SERIALIZABLE"
    }

    /// Where this connection goes (print it: its password reads `***`).
    public let uri: PostgresURI
    private let pq: LibPQ
    private let handle: OpaquePointer
    /// The passwords libpq may have used (the URI's, `PGPASSWORD`), hidden in every message kept from it or the server.
    private let passwords: [String]
    private let scrubber: SecretScrubber
    private let transactions = TransactionNesting()
    /// Statements prepared on this connection, by the SQL they were given as, with the types the server inferred.
    private var prepared: [String: PreparedStatement] = [:]
    private var preparedCount = 0
    /// How many statements stay prepared before the cache starts over (`DEALLOCATE ALL`).
    private static let preparedLimit = 256

    public var dialect: any SQLDialect { PostgresDialect() }
    /// Whether the server refuses writes on this connection: a standby in recovery, or a role or database whose
    /// `default_transaction_read_only` is on. Read once, when the connection is made.
    public private(set) var isReadOnly = false

    /// Rows changed by the last INSERT, UPDATE or DELETE (the count in its command tag).
    public private(set) var changes = 0
    public var prelude: SnapshotPrelude?

    /// The operation's deadline for lock waits (`WaitDeadline`). Before each statement, `lock_timeout` is lowered to
    /// what is left of it (at least 1 ms: a lock held by another session then fails the statement at once), and put
    /// back to the session's limit once no deadline is set. A lock wait that runs out spends it.
    public var waitDeadline: WaitDeadline?
    /// The session's own `lock_timeout` (`PostgresSessionLimits`); 0 for none.
    private let lockTimeoutMilliseconds: Int
    /// The `lock_timeout` the session has now, as this connection last set it; nil when unknown (a SET made inside
    /// a transaction that has ended since: a rollback undid it).
    private var lockTimeoutNow: Int?
    /// Whether `lockTimeoutNow` was set inside the transaction that is open (or was, until it ended).
    private var lockTimeoutSetInTransaction = false
    /// How far `lock_timeout` may stray from the deadline before it is set again: each SET is a round trip.
    static let lockTimeoutSlackMilliseconds = 100
    /// When the statement being answered was sent (`DispatchTime` uptime, nanoseconds).
    private var sentAt: UInt64 = 0
    /// A statement answered later than this after it was sent may have waited for a lock: without a deadline, the
    /// connection then takes one from when it was sent (the busy timeout from then), so a second wait gets only
    /// what the first left. The server does not say whether a statement waited; a quick one did not wait long.
    static let possibleWaitNanoseconds: UInt64 = 100_000_000

    /// Parses `uri` and connects. Throws a `PostgresError`: `.uri` for an address Gatehouse does not accept,
    /// `.library` without libpq, `.connection` when the server cannot be reached or refuses the login.
    public convenience init(uri: String, limits: PostgresSessionLimits = PostgresSessionLimits()) throws(PostgresError) {
        try self.init(uri: try PostgresURI(uri), limits: limits)
    }

    /// Connects to `uri`, in UTF-8, with bytea as hex and floats that read back exactly, under `limits`, and pins the
    /// session's `search_path` (see `pinnedSearchPath`).
    public init(uri: PostgresURI, limits: PostgresSessionLimits = PostgresSessionLimits()) throws(PostgresError) {
        let pq = try LibPQ.load()
        self.uri = uri
        self.pq = pq
        let environmentPassword = getenv("PGPASSWORD").map { String(cString: $0) }
        self.passwords = [uri.password, environmentPassword].compactMap { $0 }
        self.scrubber = SecretScrubber(passwords: passwords)
        lockTimeoutMilliseconds = min(max(0, limits.lockTimeoutMilliseconds), Int(Int32.max))
        lockTimeoutNow = lockTimeoutMilliseconds

        let keywords = uri.connectionKeywords
        let connection: OpaquePointer? = withCStrings(keywords.map(\.0)) { names in
            withCStrings(keywords.map(\.1)) { values in pq.connectdbParams(names, values, 0) }
        }
        guard let connection else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection", store: uri.redacted)
        }
        guard pq.status(connection) == CONNECTION_OK else {
            let message = pq.errorMessage(connection).map { String(cString: $0) } ?? "unknown error"
            pq.finish(connection)
            throw PostgresError(kind: .connection, message: scrubber.scrub(message), store: uri.redacted)
        }
        handle = connection
        // Notices (such as "there is no transaction in progress") would go to stderr, under the CLI's own output.
        _ = pq.setNoticeProcessor(connection, PostgresNotices.ignore, nil)
        do {
            // Dates come back as `2026-11-30 03:48:03.123+00`: in UTC whatever the server's TimeZone, so every
            // reader sees the same text, and `timestamp without time zone` columns compare against UTC as written.
            try executeScript("SET bytea_output = 'hex'; SET extra_float_digits = 3; SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'; "
                              + limits.setStatements)
            let state = try run("SELECT pg_is_in_recovery() OR current_setting('default_transaction_read_only') = 'on', \(Self.pinnedSearchPath)", [])
            isReadOnly = state.first.map { $0[0] == .integer(1) } ?? false
        } catch {
            pq.finish(connection)
            throw error
        }
    }

    deinit { pq.finish(handle) }

    /// Pins the session's `search_path` to the schemas it reaches now, less one another role could have put there: a
    /// schema named after the session's role (what `"$user"`, first in the default path, finds) that neither the
    /// role nor a superuser owns. Without this, a role with CREATE on the database could create such a schema and
    /// shadow any table named unqualified (`gatehouse_admins`) for every connection made after. Set once per
    /// connection, inside the statement that reads `isReadOnly` (no round trip of its own); `schemaShadows` reports
    /// what it left out.
    static let pinnedSearchPath = """
        set_config('search_path', coalesce((
            SELECT string_agg(quote_ident(p.s), ', ' ORDER BY p.i) FROM unnest(current_schemas(false)) WITH ORDINALITY AS p(s, i)
            WHERE p.s <> current_user OR EXISTS (SELECT 1 FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner
                                                 WHERE n.nspname = p.s AND (r.rolname = current_user OR r.rolsuper))), ''), false)
        """

    /// Whether the connection can take the next statement: the server has not gone away and no pipeline was left
    /// open by a connection cut off mid-way. An idle connection whose socket has something to read was told
    /// something nobody asked for: in practice the server's goodbye (a terminated backend, a restart, an idle
    /// timeout), so it counts as unusable too. A pool drops such a connection and makes a new one.
    public var isUsable: Bool {
        guard !broken, pq.status(handle) == CONNECTION_OK else { return false }
        guard !isInTransaction else { return true }
        let fd = pq.socket(handle)
        guard fd >= 0 else { return false }
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, 0) == 0
    }

    /// Set when the connection was left in a state no statement can follow (a pipeline that could not be ended).
    private var broken = false

    public var description: String { "Postgres connection to \(uri.redacted)" }

    /// The server's version as a number: 150018 for 15.18.
    public var serverVersion: Int { Int(pq.serverVersion(handle)) }

    /// Whether a transaction is open on this connection (including one a failed statement has aborted).
    public var isInTransaction: Bool {
        let status = pq.transactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: - Statements

    /// Runs one statement that returns no rows. `changes` then holds the rows it changed.
    public func execute(_ sql: String, _ arguments: [SQLBindable]) throws {
        _ = try run(sql, arguments.map(\.sqlValue))
    }

    /// Runs a script of several statements separated by `;` (a migration). Takes no arguments.
    public func executeScript(_ sql: String) throws(PostgresError) {
        try checkSQL(sql)
        boundLockWait()
        let result = pq.exec(handle, sql)
        defer { if let result { pq.clear(result) } }
        try check(result, sql: sql, boundValues: [])
    }

    /// Calls `body` for every result row.
    /// Calls `body` for every result row as the server sends it (libpq's single-row mode): a scan of a whole table
    /// holds one row in memory at a time. When `body` throws, the rest of the result is read and dropped (the
    /// connection must be idle again) and the error rethrown.
    public func forEach(_ sql: String, _ arguments: [SQLBindable], _ body: (Row) throws -> Void) throws {
        let arguments = arguments.map(\.sqlValue)
        let (sent, boundText) = try withParameters(sql, arguments) { statement, values, lengths, formats in
            pq.sendQueryPrepared(handle, statement.name, Int32(arguments.count), values, lengths, formats, 0)
        }
        guard sent == 1 else { try check(nil, sql: sql, boundValues: boundText); return }
        _ = pq.setSingleRowMode(handle)
        var shape: (columns: ColumnIndex, types: [Oid])?
        var failure: Error?
        var first = true
        while let result = pq.getResult(handle) {
            defer { pq.clear(result) }
            // The first row's wait is the statement's (a lock included); the rest is the scan's own pace.
            if first { notePossibleWait(); first = false }
            // After a failure the rest is only drained: libpq takes no new statement until the result is consumed.
            guard failure == nil else { continue }
            switch pq.resultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                let (columns, types) = shape ?? resultShape(result)
                shape = (columns, types)
                do { try body(row(result, 0, columns: columns, types: types)) } catch { failure = error }
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                changes = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
            default:
                do { try check(result, sql: sql, boundValues: boundText) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// All result rows.
    public func rows(_ sql: String, _ arguments: [SQLBindable]) throws -> [Row] {
        try run(sql, arguments.map(\.sqlValue))
    }

    /// The first result row, if any.
    public func row(_ sql: String, _ arguments: [SQLBindable]) throws -> Row? {
        try run(sql, arguments.map(\.sqlValue)).first
    }

    /// The first column of the first row, or `.null`.
    public func scalar(_ sql: String, _ arguments: [SQLBindable]) throws -> SQLValue {
        guard let row = try run(sql, arguments.map(\.sqlValue)).first, !row.values.isEmpty else { return .null }
        return row[0]
    }

    /// The rows of each statement from one snapshot, in one round trip: libpq's pipeline mode sends
    /// `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`, every statement and `COMMIT` together (without the
    /// `BEGIN`/`COMMIT` inside the caller's transaction), and reads the results in order. Statements seen for the
    /// first time on this connection are prepared before, together (one more round trip, once). The first error is
    /// thrown, the transaction of its own rolled back. Without pipeline mode (libpq before 14), one after another.
    public func snapshot(_ statements: [SQLStatement]) throws -> [[Row]] {
        try answeringPrelude(statements) { statements in
            guard let pipeline = pq.pipeline, statements.count > 1, pq.transactionStatus(handle) != PQTRANS_INERROR else {
                return try read { try statements.map { try run($0.sql, $0.arguments.map(\.sqlValue)) } }
            }
            let own = !isInTransaction
            return try pipelined(pipeline, statements, begin: own ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : nil,
                                 end: own ? "COMMIT" : nil).map(\.rows)
        }
    }

    /// Runs the statements in order, `pipelineChunk` at a time per round trip (libpq's pipeline mode; one after
    /// another without it), and returns each one's rows and changed-row count. A failing statement stops the
    /// batch: the ones after it do not run, and its error is thrown. Meant for inside a transaction (outside one,
    /// each chunk is a transaction of its own).
    public func batch(_ statements: [SQLStatement]) throws -> [SQLBatchResult] {
        guard let pipeline = pq.pipeline, statements.count > 1, pq.transactionStatus(handle) != PQTRANS_INERROR else {
            return try statements.map { SQLBatchResult(rows: try run($0.sql, $0.arguments.map(\.sqlValue)), changes: changes) }
        }
        var results: [SQLBatchResult] = []
        results.reserveCapacity(statements.count)
        for start in stride(from: 0, to: statements.count, by: Self.pipelineChunk) {
            results += try pipelined(pipeline, Array(statements[start..<min(statements.count, start + Self.pipelineChunk)]), begin: nil, end: nil)
        }
        changes = results.last?.changes ?? 0
        return results
    }

    /// Statements per round trip in `batch`: the results of a chunk wait in the socket until it is sent, so a chunk
    /// stays well inside the socket's buffers.
    static let pipelineChunk = 128

    /// Sends `begin`, the statements and `end` in one pipeline and reads every result in order. Statements are
    /// prepared first (`prepareAll`). After a failure the server skips the rest; a `begin` of this pipeline is then
    /// rolled back.
    private func pipelined(_ pipeline: LibPQ.Pipeline, _ statements: [SQLStatement], begin: String?, end: String?) throws -> [SQLBatchResult] {
        let arguments = statements.map { $0.arguments.map(\.sqlValue) }
        let ready = try prepareAll(statements.indices.map { (statements[$0].sql, arguments[$0]) })
        guard pipeline.enter(handle) == 1 else { throw connectionError("could not enter pipeline mode") }
        var sentAll = true, queued = 0
        func sendCommand(_ sql: String) {
            let sent = pq.sendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1
            if sent { queued += 1 }
            sentAll = sentAll && sent
        }
        var boundText: [[String]] = []
        if let begin { sendCommand(begin) }
        do {
            for (index, statement) in ready.enumerated() {
                let (sent, text) = try bind(statement, sql: statements[index].sql, arguments[index]) { statement, values, lengths, formats in
                    pq.sendQueryPrepared(handle, statement.name, Int32(arguments[index].count), values, lengths, formats, 0)
                }
                if sent == 1 { queued += 1 }
                sentAll = sentAll && sent == 1
                boundText.append(text)
            }
        } catch {
            // A value that cannot be sent (text with a NUL): end the pipeline as it stands, so that the connection
            // takes the next statement, and undo what this pipeline began.
            _ = pipeline.sync(handle)
            _ = pq.flush(handle)
            for _ in 0..<queued { drainResult { _ in } }
            _ = awaitSync()
            exitPipeline(pipeline)
            if begin != nil && isInTransaction { try? executeScript("ROLLBACK") }
            throw error
        }
        if let end { sendCommand(end) }
        sentAll = sentAll && pipeline.sync(handle) == 1 && pq.flush(handle) == 0

        // Results come back in the order sent, each followed by a null result; then the sync.
        var results: [SQLBatchResult] = []
        var failure: PostgresError?
        func collect(sql: String, boundValues: [String]) -> SQLBatchResult {
            var outcome = SQLBatchResult(rows: [], changes: 0)
            var streamed: [Row] = []
            drainResult { result in
                switch pq.resultStatus(result) {
                case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                    outcome = SQLBatchResult(rows: streamed + decodeRows(result), changes: pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0)
                case PGRES_SINGLE_TUPLE:
                    // libpq (15) can leave single-row mode set, after a streamed scan (`forEach`), for the first
                    // query of the next pipeline: its rows then come one result each, ended by an empty TUPLES_OK.
                    streamed += decodeRows(result)
                case PGRES_PIPELINE_ABORTED: break
                default:
                    do throws(PostgresError) { try check(result, sql: sql, boundValues: boundValues) } catch { failure = failure ?? error }
                }
            }
            return outcome
        }
        if sentAll {
            if let begin { _ = collect(sql: begin, boundValues: []) }
            for (index, statement) in statements.enumerated() { results.append(collect(sql: statement.sql, boundValues: boundText[index])) }
            if let end { _ = collect(sql: end, boundValues: []) }
            if !awaitSync() { failure = failure ?? connectionError("the server did not answer the pipeline") }
            notePossibleWait()
        } else {
            failure = failure ?? connectionError("could not send the statements")
        }
        exitPipeline(pipeline)
        if let failure {
            // A failed statement leaves the transaction this pipeline began open and aborted.
            if begin != nil && isInTransaction { try? executeScript("ROLLBACK") }
            throw failure
        }
        return results
    }

    /// Leaves pipeline mode. libpq refuses while results are still due, which happens only when the connection was
    /// cut off mid-pipeline: the connection is then marked unusable (every synchronous call would fail "not allowed in
    /// pipeline mode"), and a pool replaces it.
    private func exitPipeline(_ pipeline: LibPQ.Pipeline) {
        if pipeline.exit(handle) != 1 { broken = true }
    }

    /// Calls `body` with each result of the current query until libpq's null result that ends it.
    private func drainResult(_ body: (OpaquePointer) -> Void) {
        while let result = pq.getResult(handle) {
            defer { pq.clear(result) }
            body(result)
        }
    }

    /// Reads up to the pipeline's sync; false when the connection ended first.
    private func awaitSync() -> Bool {
        while let result = pq.getResult(handle) {
            let synced = pq.resultStatus(result) == PGRES_PIPELINE_SYNC
            pq.clear(result)
            if synced { return true }
        }
        return false
    }

    private func connectionError(_ message: String) -> PostgresError {
        let detail = pq.errorMessage(handle).map { String(cString: $0) }.map { scrubber.scrub($0) } ?? ""
        return PostgresError(kind: pq.status(handle) == CONNECTION_OK ? .statement : .connection,
                             message: detail.isEmpty ? message : "\(message): \(detail)", store: uri.redacted)
    }

    /// Loads rows with `COPY table (columns) FROM STDIN` (text format): the fastest way into a table, with no
    /// statement to plan and no parameter to parse per row. `values` holds `columns.count` values per row; an
    /// integer goes as its digits (which a `boolean` column reads as 1/0), a blob as bytea's hex. Returns the rows
    /// copied. Runs in the caller's transaction when there is one.
    @discardableResult
    public func copy(into table: String, columns: [String], values: ArraySlice<SQLValue>) throws -> Int {
        precondition(!columns.isEmpty && values.count % columns.count == 0, "rows are \(columns.count) values wide")
        let sql = "COPY \(Self.quote(table)) (\(columns.map(Self.quote).joined(separator: ", "))) FROM STDIN"
        try checkSQL(sql)
        boundLockWait()
        let started = pq.exec(handle, sql)
        defer { if let started { pq.clear(started) } }
        guard let started, pq.resultStatus(started) == PGRES_COPY_IN else {
            try check(started, sql: sql, boundValues: [])
            throw statementError("the server did not start the COPY", sql: sql)
        }
        var text = [UInt8]()
        text.reserveCapacity(1 << 16)
        var column = 0
        var failure: PostgresError?
        func flush() {
            guard !text.isEmpty, failure == nil else { return }
            let sent = text.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { pq.putCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            if sent != 1 { failure = connectionError("the connection refused COPY data") }
            text.removeAll(keepingCapacity: true)
        }
        for value in values {
            switch value {
            case .null: text.append(UInt8(ascii: "\\")); text.append(UInt8(ascii: "N"))
            case .integer(let int): Self.appendDecimal(int, to: &text)
            case .real(let double): text += Array(Self.text(of: double).utf8)
            case .text(let string):
                if !Self.appendCopyEscaped(string, to: &text) {
                    failure = PostgresError(kind: .statement, sqlState: PostgresSQLState.characterNotInRepertoire,
                                            message: "a text value holds a NUL character (U+0000), which Postgres text cannot hold", sql: sql, store: uri.redacted)
                }
            case .blob(let bytes):
                text += Array("\\\\x".utf8)
                for byte in bytes { text += Array(String(format: "%02x", byte).utf8) }
            }
            column += 1
            if column == columns.count {
                text.append(UInt8(ascii: "\n"))
                column = 0
                if text.count >= 1 << 16 { flush() }
            } else {
                text.append(UInt8(ascii: "\t"))
            }
        }
        flush()
        // A message ends the COPY as failed: the server takes none of its rows.
        if failure != nil { _ = pq.putCopyEnd(handle, "gatehouse stopped the COPY") } else { _ = pq.putCopyEnd(handle, nil) }
        var copied = 0
        var serverError: PostgresError?
        while let result = pq.getResult(handle) {
            defer { pq.clear(result) }
            do { try check(result, sql: sql, boundValues: []) } catch { serverError = serverError ?? error }
            copied = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? copied
        }
        if let failure { throw failure }
        if let serverError { throw serverError }
        changes = copied
        return copied
    }

    /// COPY's text escapes: backslash, tab, newline and carriage return.
    /// Appends `string` as a COPY text field (backslash, tab, newline and carriage return escaped); false when it
    /// holds a NUL, which Postgres text cannot hold. Most values need no escape and are copied in one go.
    private static func appendCopyEscaped(_ string: String, to text: inout [UInt8]) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            guard bytes.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
                text.append(contentsOf: bytes)
                return true
            }
            var clean = true
            for byte in bytes {
                switch byte {
                case 0: clean = false
                case UInt8(ascii: "\\"): text += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\t"): text += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case UInt8(ascii: "\n"): text += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): text += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: text.append(byte)
                }
            }
            return clean
        }
    }

    /// Appends `value` in decimal, as `String(value)` spells it, without building the string.
    static func appendDecimal(_ value: Int64, to text: inout [UInt8]) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0) // 32 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[31 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            text.append(contentsOf: buffer[(32 - count)...])
        }
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction at `isolation` without the writer lock: `BEGIN` at `isolation`, `COMMIT` when `body` returns, `ROLLBACK` when it throws.
    /// Nested calls become savepoints. A statement that failed inside `body` aborts the transaction even when
    /// `body` caught the error: then nothing is committed and this throws `25P02`. Under `.serializable`, the
    /// commit itself can fail with `isSerializationFailure`; run the whole transaction again.
    @discardableResult
    public func write<T>(isolation: IsolationLevel, _ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL \(isolation.rawValue)", body)
    }

    /// The advisory lock every Gatehouse write transaction takes first (and migrations with it): the ASCII bytes of
    /// "gatehous". Gatehouse's writers take turns on it as SQLite's `BEGIN IMMEDIATE` makes them, so a read-then-write
    /// inside one `write` (the audit chain's head, the policy version, a conditional set) is never interleaved with
    /// another Gatehouse writer's. Better Auth's own writes do not take it; statements that must not lose one of
    /// them lock its rows (`FOR UPDATE`).
    public static let writerLockKey: Int64 = 0x6761_7465_686F_7573

    /// Runs `body` in a READ COMMITTED transaction that first waits for the writer lock (`writerLockKey`, held until
    /// COMMIT or ROLLBACK): Postgres's counterpart of SQLite's `BEGIN IMMEDIATE`. Nested calls become savepoints.
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(\(Self.writerLockKey))", body)
    }

    /// Runs `body` in a read-only transaction on one snapshot of the database (REPEATABLE READ READ ONLY).
    @discardableResult
    public func read<T>(_ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    /// The id of the open transaction's snapshot, for another connection to read exactly the same
    /// (`pg_export_snapshot`; valid until this transaction ends). Call it first thing in a `read`, outside savepoints.
    public func exportSnapshot() throws -> String {
        try scalar("SELECT pg_export_snapshot()").string ?? ""
    }

    /// Runs `body` in a read-only transaction on the snapshot another connection exported (`exportSnapshot`).
    @discardableResult
    public func read<T>(snapshot id: String, _ body: () throws -> T) throws -> T {
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                                                  || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }) else {
            throw statementError("not a snapshot id: \(id.prefix(40))", sql: nil)
        }
        return try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '\(id)'", body)
    }

    private func transaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        try transactions.run(on: self, begin: begin, beforeCommit: {
            guard pq.transactionStatus(handle) == PQTRANS_INERROR else { return }
            // COMMIT would answer "ROLLBACK" without an error: say so instead of returning as if it had been written.
            throw PostgresError(kind: .statement, sqlState: PostgresSQLState.inFailedSQLTransaction,
                                message: "the transaction was rolled back: a statement in it failed and its error was caught",
                                store: uri.redacted)
        }, body)
    }

    /// Quotes an identifier for SQL (`user` → `"user"`).
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    // MARK: - libpq

    /// A statement prepared on this connection: its name and the types the server gave its parameters.
    private struct PreparedStatement {
        let name: String
        let parameterTypes: [Oid]
    }

    /// Runs `sql` (with `?` or `$1`… placeholders) with `arguments`, through a statement prepared once per
    /// connection, and decodes the rows. Each value is sent as the type the server inferred for its place: an
    /// integer bound to a `boolean` goes as `t`/`f`, a blob to a `bytea` in binary, everything else as text.
    private func run(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> [Row] {
        let (result, boundText) = try withParameters(sql, arguments) { statement, values, lengths, formats in
            pq.execPrepared(handle, statement.name, Int32(arguments.count), values, lengths, formats, 0)
        }
        defer { if let result { pq.clear(result) } }
        try check(result, sql: sql, boundValues: boundText)
        guard let result else { return [] }
        changes = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return decodeRows(result)
    }

    /// Prepares `sql` (once per connection) and calls `send` with `arguments` in libpq's parameter arrays, each value
    /// sent as the type the server inferred for its place: an integer bound to a `boolean` goes as `t`/`f`, a blob
    /// to a `bytea` in binary, everything else as text. Returns what `send` returned and the text values bound (to
    /// scrub from an error message).
    private func withParameters<R>(_ sql: String, _ arguments: [SQLValue],
                                   _ send: (PreparedStatement, UnsafePointer<UnsafePointer<CChar>?>?, [Int32], [Int32]) -> R)
        throws(PostgresError) -> (R, [String]) {
        try bind(try checkedPrepare(sql, arguments), sql: sql, arguments, send)
    }

    /// The prepared statement for `sql` (prepared on first use), checked against the number of `arguments`.
    private func checkedPrepare(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> PreparedStatement {
        try prepareAll([(sql, arguments)])[0]
    }

    /// The prepared statements for several statements, checked against their arguments. Those not prepared yet on
    /// this connection are prepared together, in one round trip (`pipelinedPrepare`).
    private func prepareAll(_ items: [(sql: String, arguments: [SQLValue])]) throws(PostgresError) -> [PreparedStatement] {
        boundLockWait()
        for item in items {
            try checkSQL(item.sql)
            guard item.arguments.count <= 65535 else {
                throw statementError("a statement takes at most 65535 parameters, got \(item.arguments.count)", sql: item.sql)
            }
        }
        var unprepared = Array(Set(items.map(\.sql).filter { prepared[$0] == nil }))
        if !unprepared.isEmpty, prepared.count + unprepared.count >= Self.preparedLimit, pq.transactionStatus(handle) != PQTRANS_INERROR {
            try executeScript("DEALLOCATE ALL")
            prepared.removeAll(keepingCapacity: true)
            unprepared = Array(Set(items.map(\.sql)))
        }
        if unprepared.count > 0, pq.pipeline != nil, pq.transactionStatus(handle) != PQTRANS_INERROR {
            for (sql, statement) in try pipelinedPrepare(unprepared.sorted()) { prepared[sql] = statement }
        }
        var statements: [PreparedStatement] = []
        for item in items {
            // Anything the pipeline could not prepare (`? IS NULL`, or a statement with an error to report) goes
            // the one-at-a-time way, which knows what to do about it.
            let statement = try prepare(item.sql, arguments: item.arguments)
            guard statement.parameterTypes.count == item.arguments.count else {
                throw statementError("the statement has \(statement.parameterTypes.count) placeholder(s) but \(item.arguments.count) value(s) were bound", sql: item.sql)
            }
            statements.append(statement)
        }
        // Preparing may have waited for a lock: what is sent next gets only what is left of the budget.
        boundLockWait()
        return statements
    }

    /// Prepares and describes every statement in one pipeline (inside a transaction, within a savepoint, so that a
    /// statement the server cannot prepare does not abort it). Returns what it prepared: everything, or nothing
    /// when one failed (the caller then prepares one at a time and reports the error). A failure that preparing again
    /// would only repeat — a lock wait that timed out, a cancelled statement, a lost connection — is thrown at once:
    /// trying again one at a time would double the wait.
    private func pipelinedPrepare(_ sqls: [String]) throws(PostgresError) -> [String: PreparedStatement] {
        guard let pipeline = pq.pipeline, pipeline.enter(handle) == 1 else { return [:] }
        let guarded = isInTransaction
        var sentAll = true
        if guarded { sentAll = pq.sendQueryParams(handle, "SAVEPOINT gatehouse_prepare", 0, nil, nil, nil, nil, 0) == 1 }
        var names: [String] = []
        for sql in sqls {
            preparedCount += 1
            let name = "gatehouse_\(preparedCount)"
            names.append(name)
            sentAll = sentAll && pq.sendPrepare(handle, name, PostgresPlaceholders.numbered(sql), 0, nil) == 1
                && pq.sendDescribePrepared(handle, name) == 1
        }
        if guarded { sentAll = sentAll && pq.sendQueryParams(handle, "RELEASE SAVEPOINT gatehouse_prepare", 0, nil, nil, nil, nil, 0) == 1 }
        sentAll = sentAll && pipeline.sync(handle) == 1 && pq.flush(handle) == 0
        var failed = !sentAll
        var firstError: PostgresError?
        var made: [String: PreparedStatement] = [:]
        if sentAll {
            func note(_ result: OpaquePointer) {
                failed = true
                guard firstError == nil, pq.resultStatus(result) != PGRES_PIPELINE_ABORTED else { return }
                do throws(PostgresError) { try check(result, sql: "PREPARE", boundValues: []) } catch { firstError = error }
            }
            func expectCommand() { drainResult { if pq.resultStatus($0) != PGRES_COMMAND_OK { note($0) } } }
            if guarded { expectCommand() }
            for (sql, name) in zip(sqls, names) {
                expectCommand()
                drainResult { described in
                    guard pq.resultStatus(described) == PGRES_COMMAND_OK else { note(described); return }
                    made[sql] = PreparedStatement(name: name, parameterTypes: (0..<pq.nparams(described)).map { pq.paramtype(described, $0) })
                }
            }
            if guarded { expectCommand() }
            if !awaitSync() { failed = true }
            notePossibleWait()
        }
        exitPipeline(pipeline)
        guard failed else { return made }
        if guarded && pq.transactionStatus(handle) == PQTRANS_INERROR {
            try? executeScript("ROLLBACK TO SAVEPOINT gatehouse_prepare; RELEASE SAVEPOINT gatehouse_prepare")
        }
        if let firstError, firstError.isBusy || firstError.isTimeout || firstError.isConnectionFailure { throw firstError }
        if pq.status(handle) != CONNECTION_OK { throw connectionError("the connection was lost while preparing statements") }
        return [:]
    }

    /// Calls `send` with `arguments` in libpq's parameter arrays, as `statement`'s parameter types want them.
    private func bind<R>(_ statement: PreparedStatement, sql: String, _ arguments: [SQLValue],
                         _ send: (PreparedStatement, UnsafePointer<UnsafePointer<CChar>?>?, [Int32], [Int32]) -> R)
        throws(PostgresError) -> (R, [String]) {
        var lengths: [Int32] = [], formats: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        var boundText: [String] = []
        defer { for buffer in buffers { free(buffer) } }
        for (offset, value) in arguments.enumerated() {
            let type = statement.parameterTypes[offset]
            func text(_ text: String) { lengths.append(0); formats.append(0); buffers.append(strdup(text)) }
            switch value {
            case .null:
                lengths.append(0); formats.append(0); buffers.append(nil)
            case .integer(let int):
                text(type == PostgresType.bool ? (int != 0 ? "t" : "f") : String(int))
            case .real(let double):
                text(Self.text(of: double))
            case .text(let value):
                // libpq sends text parameters up to their first NUL: refuse rather than store a cut value.
                if value.utf8.contains(0) && type != PostgresType.bytea {
                    throw PostgresError(kind: .statement, sqlState: PostgresSQLState.characterNotInRepertoire,
                                        message: "parameter $\(offset + 1) is text with a NUL character (U+0000), which Postgres text cannot hold; store it as a blob (bytea)",
                                        sql: sql, store: uri.redacted)
                }
                boundText.append(value)
                if type == PostgresType.bytea { binary(Array(value.utf8)) } else { text(value) }
            case .blob(let bytes):
                binary(bytes)
            }
            func binary(_ bytes: [UInt8]) {
                let buffer = malloc(max(bytes.count, 1))!.assumingMemoryBound(to: CChar.self)
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(buffer), byteCount: bytes.count) }
                lengths.append(Int32(bytes.count)); formats.append(1); buffers.append(buffer)
            }
        }
        let sent = buffers.withUnsafeBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in send(statement, values.baseAddress, lengths, formats) }
        }
        return (sent, boundText)
    }

    /// The prepared statement for `sql`, preparing it on first use. The server first infers every parameter's type
    /// from where it stands; where it cannot (`? IS NULL`), the statement is prepared again with the types of the
    /// values bound (integer `int8`, real `float8`, blob `bytea`, text and null `text`) and not kept. Inside a
    /// transaction the first attempt runs in a savepoint, so its failure does not abort the transaction.
    private func prepare(_ sql: String, arguments: [SQLValue]) throws(PostgresError) -> PreparedStatement {
        let statement = try prepareInferred(sql, arguments: arguments)
        // A place whose type nothing fixes (`SELECT ?`) is inferred as text: a number or blob bound there is prepared
        // with its own type instead, so it comes back as it went in (kept under the SQL and those types).
        let retyped: [Oid] = zip(statement.parameterTypes, arguments).map { type, value in
            guard type == PostgresType.text else { return type }
            switch value {
            case .integer: return PostgresType.int8
            case .real: return PostgresType.float8
            case .blob: return PostgresType.bytea
            case .text, .null: return type
            }
        }
        guard retyped != statement.parameterTypes else { return statement }
        let key = sql + "\u{0}" + retyped.map(String.init).joined(separator: ",")
        if let typed = prepared[key] { return typed }
        let typed = try prepareNamed(PostgresPlaceholders.numbered(sql), sql: sql, types: retyped)
        prepared[key] = typed
        return typed
    }

    private func prepareInferred(_ sql: String, arguments: [SQLValue]) throws(PostgresError) -> PreparedStatement {
        if let statement = prepared[sql] { return statement }
        let text = PostgresPlaceholders.numbered(sql)
        if prepared.count >= Self.preparedLimit && pq.transactionStatus(handle) != PQTRANS_INERROR {
            try executeScript("DEALLOCATE ALL")
            prepared.removeAll(keepingCapacity: true)
        }
        let guarded = isInTransaction
        if guarded { try executeScript("SAVEPOINT gatehouse_prepare") }
        do {
            let statement = try prepareNamed(text, sql: sql, types: [])
            if guarded { try executeScript("RELEASE SAVEPOINT gatehouse_prepare") }
            prepared[sql] = statement
            return statement
        } catch where error.sqlState == PostgresSQLState.indeterminateDatatype || error.sqlState == PostgresSQLState.ambiguousFunction
                    || error.sqlState == PostgresSQLState.undefinedFunction {
            if guarded { try executeScript("ROLLBACK TO SAVEPOINT gatehouse_prepare; RELEASE SAVEPOINT gatehouse_prepare") }
            let types: [Oid] = arguments.map {
                switch $0 {
                case .integer: PostgresType.int8
                case .real: PostgresType.float8
                case .blob: PostgresType.bytea
                case .text, .null: PostgresType.text
                }
            }
            return try prepareNamed(text, sql: sql, types: types)
        } catch {
            if guarded { try? executeScript("ROLLBACK TO SAVEPOINT gatehouse_prepare; RELEASE SAVEPOINT gatehouse_prepare") }
            throw error
        }
    }

    private func prepareNamed(_ text: String, sql: String, types: [Oid]) throws(PostgresError) -> PreparedStatement {
        preparedCount += 1
        let name = "gatehouse_\(preparedCount)"
        let made = pq.prepare(handle, name, text, Int32(types.count), types.isEmpty ? nil : types)
        defer { if let made { pq.clear(made) } }
        try check(made, sql: sql, boundValues: [])
        let described = pq.describePrepared(handle, name)
        defer { if let described { pq.clear(described) } }
        try check(described, sql: sql, boundValues: [])
        guard let described else { return PreparedStatement(name: name, parameterTypes: types) }
        let count = Int(pq.nparams(described))
        return PreparedStatement(name: name, parameterTypes: (0..<count).map { pq.paramtype(described, Int32($0)) })
    }

    private func decodeRows(_ result: OpaquePointer) -> [Row] {
        guard pq.nfields(result) > 0 else { return [] }
        let (columns, types) = resultShape(result)
        return (0..<pq.ntuples(result)).map { row(result, $0, columns: columns, types: types) }
    }

    /// A result's column names and types, read once per statement.
    private func resultShape(_ result: OpaquePointer) -> (ColumnIndex, [Oid]) {
        let count = Int32(pq.nfields(result))
        return (ColumnIndex((0..<count).map { pq.fname(result, $0).map { String(cString: $0) } ?? "?column?" }),
                (0..<count).map { pq.ftype(result, $0) })
    }

    private func row(_ result: OpaquePointer, _ index: Int32, columns: ColumnIndex, types: [Oid]) -> Row {
        var values: [SQLValue] = []
        values.reserveCapacity(types.count)
        for column in 0..<Int32(types.count) {
            if pq.getisnull(result, index, column) != 0 { values.append(.null); continue }
            let count = Int(pq.getlength(result, index, column))
            let bytes = UnsafeRawBufferPointer(start: pq.getvalue(result, index, column), count: count)
            values.append(Self.value(bytes, type: types[Int(column)]))
        }
        return Row(columns: columns, values: values)
    }

    /// Throws the error a result (or its absence) reports; returns for a command or a result with rows.
    private func check(_ result: OpaquePointer?, sql: String, boundValues: [String]) throws(PostgresError) {
        // Built only for an error to report: sorting the bound values on every statement cost more than running it.
        var scrubber: SecretScrubber { boundValues.isEmpty ? self.scrubber : SecretScrubber(passwords: passwords, boundValues: boundValues) }
        notePossibleWait()
        guard let result else {
            let message = pq.errorMessage(handle).map { String(cString: $0) } ?? "no result"
            throw PostgresError(kind: pq.status(handle) == CONNECTION_OK ? .statement : .connection,
                                message: scrubber.scrub(message), sql: sql, store: uri.redacted)
        }
        switch pq.resultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        case PGRES_COPY_IN, PGRES_COPY_OUT:
            throw statementError("COPY is not supported by execute", sql: sql)
        default:
            func field(_ code: CChar) -> String? {
                pq.resultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            let message = field(CChar(UInt8(ascii: "M")))
                ?? pq.resultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
            let sqlState = field(CChar(UInt8(ascii: "C")))
            // A lock wait that ran out spends the operation's budget: its later statements wait no more.
            if sqlState == PostgresSQLState.lockNotAvailable { waitDeadline = .now }
            let connectionLost = pq.status(handle) != CONNECTION_OK
            let scrubber = scrubber
            throw PostgresError(kind: connectionLost && sqlState == nil ? .connection : .statement,
                                sqlState: sqlState, message: scrubber.scrub(message),
                                hint: field(CChar(UInt8(ascii: "H"))).map(scrubber.scrub),
                                constraint: field(CChar(UInt8(ascii: "n"))), table: field(CChar(UInt8(ascii: "t"))),
                                sql: sql, store: uri.redacted)
        }
    }

    private func checkSQL(_ sql: String) throws(PostgresError) {
        // memchr over the text's bytes in place: this runs for every statement.
        let hasNUL = sql.utf8.withContiguousStorageIfAvailable { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false } ?? sql.utf8.contains(0)
        if hasNUL { throw statementError("the SQL text contains a NUL character", sql: nil) }
    }

    private func statementError(_ message: String, sql: String?) -> PostgresError {
        PostgresError(kind: .statement, message: message, sql: sql, store: uri.redacted)
    }

    /// Starts the connection's wait budget from when the statement being answered was sent, when it has none and the
    /// answer took long enough that the statement may have waited for a lock (`possibleWaitNanoseconds`).
    private func notePossibleWait() {
        guard waitDeadline == nil, sentAt > 0, WaitDeadline.clock - sentAt > Self.possibleWaitNanoseconds else { return }
        waitDeadline = WaitDeadline(milliseconds: lockTimeoutMilliseconds == 0 ? Int(Int32.max) : lockTimeoutMilliseconds, after: sentAt)
    }

    /// Sets `lock_timeout` to what is left of `waitDeadline` (the session's limit when there is none), when it
    /// strays from that by more than the slack: nothing to send while an operation's waits are quick. Called before
    /// every statement is sent; a failed SET leaves the setting unknown, to be tried again before the next.
    private func boundLockWait() {
        sentAt = WaitDeadline.clock
        let status = pq.transactionStatus(handle)
        // An aborted transaction takes no statement but its end; a statement still running cannot be interrupted.
        guard status == PQTRANS_IDLE || status == PQTRANS_INTRANS else { return }
        if lockTimeoutSetInTransaction && status == PQTRANS_IDLE {
            lockTimeoutNow = nil
            lockTimeoutSetInTransaction = false
        }
        let wanted: Int
        if let waitDeadline {
            let limit = lockTimeoutMilliseconds == 0 ? Int(Int32.max) : lockTimeoutMilliseconds
            wanted = max(1, min(limit, waitDeadline.remainingMilliseconds))
        } else {
            wanted = lockTimeoutMilliseconds
        }
        if let now = lockTimeoutNow, abs(now - wanted) <= Self.lockTimeoutSlackMilliseconds, (now == 0) == (wanted == 0) { return }
        let result = pq.exec(handle, "SET lock_timeout = \(wanted)")
        defer { if let result { pq.clear(result) } }
        if let result, pq.resultStatus(result) == PGRES_COMMAND_OK {
            lockTimeoutNow = wanted
            lockTimeoutSetInTransaction = status == PQTRANS_INTRANS
        } else {
            lockTimeoutNow = nil
        }
    }

    // MARK: - Values

    /// A double as Postgres's float8 input reads it back exactly.
    public static func text(of double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-Infinity" : "Infinity" }
        return String(double)
    }

    /// A text-format result value as the `SQLValue` its type maps to: integers, floats, booleans (as 1/0, the
    /// encoding Better Auth uses on SQLite) and bytea decode; every other type (numeric, dates, uuid, json…) stays text.
    static func value(_ bytes: UnsafeRawBufferPointer, type: Oid) -> SQLValue {
        let text = String(decoding: bytes, as: UTF8.self)
        switch type {
        case PostgresType.int8, PostgresType.int4, PostgresType.int2, PostgresType.oid:
            return Int64(text).map(SQLValue.integer) ?? .text(text)
        case PostgresType.float8, PostgresType.float4:
            switch text {
            case "NaN": return .real(.nan)
            case "Infinity": return .real(.infinity)
            case "-Infinity": return .real(-.infinity)
            default: return Double(text).map(SQLValue.real) ?? .text(text)
            }
        case PostgresType.bool:
            return .integer(text == "t" ? 1 : 0)
        case PostgresType.bytea:
            return decodeHexBytea(bytes).map(SQLValue.blob) ?? .text(text)
        default:
            return .text(text)
        }
    }

    /// bytea's hex output (`\x0aff…`).
    private static func decodeHexBytea(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

/// The type OIDs Storage binds or decodes (pg_type.dat; fixed since Postgres 7).
enum PostgresType {
    static let bool: Oid = 16
    static let bytea: Oid = 17
    static let int8: Oid = 20
    static let int2: Oid = 21
    static let int4: Oid = 23
    static let oid: Oid = 26
    static let float4: Oid = 700
    static let float8: Oid = 701
    static let text: Oid = 25
}

/// `?` placeholders numbered for Postgres (`$1`, `$2`, …) and SQLite's `?NNN` written `$NNN`, skipping those inside
/// string literals, quoted identifiers and comments (`SQLPlaceholders.scan`). SQL already written with `$n` passes unchanged.
enum PostgresPlaceholders {
    static func numbered(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        SQLPlaceholders.scan(sql, sqliteQuotes: false, text: { out += $0 }, placeholder: { explicit in
            if let explicit {
                out += "$\(explicit)"
                number = max(number, explicit)
            } else {
                number += 1
                out += "$\(number)"
            }
        })
        return out
    }
}

/// libpq's notice callback, defined away from any actor (libpq calls it from inside its own calls).
enum PostgresNotices {
    static let ignore: gatehouse_pq_notice_processor = { _, _ in }
}

/// Calls `body` with a NULL-terminated array of C strings, valid only inside `body`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) } + [nil]
    // One of them may be the password: wipe before freeing.
    defer { for copy in copies { if let copy { explicit_bzero(copy, strlen(copy)) }; free(copy) } }
    return copies.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { body($0.baseAddress!) }
    }
}
