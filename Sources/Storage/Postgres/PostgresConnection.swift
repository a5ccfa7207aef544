import CLibPQ
import Glibc

/// One connection to a Postgres server, through libpq (loaded on first use).
///
/// Like `Database`, a connection is used by one thread at a time and is deliberately not `Sendable`. Parameters are
/// written `$1`, `$2`, … and bound from `SQLValue`s with their types (integer as `int8`, real as `float8`, blob as
/// `bytea`, text left for the server to infer from where it is used); results come back as `Row`s, read by
/// column name.
///
///     let db = try PostgresConnection(uri: "postgresql://gatehouse@/auth?host=/var/run/postgresql")
///     try db.write {
///         try db.execute("INSERT INTO gatehouse_audit(action) VALUES ($1)", ["init"])
///     }
///     let count = try db.scalar("SELECT count(*) FROM \"user\"").int64
public final class PostgresConnection: CustomStringConvertible {
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
    private var savepointDepth = 0

    /// Rows changed by the last INSERT, UPDATE or DELETE (the count in its command tag).
    public private(set) var changes = 0

    /// Parses `uri` and connects. Throws a `PostgresError`: `.uri` for an address Gatehouse does not accept,
    /// `.library` without libpq, `.connection` when the server cannot be reached or refuses the login.
    public convenience init(uri: String) throws(PostgresError) {
        try self.init(uri: try PostgresURI(uri))
    }

    /// Connects to `uri`, in UTF-8, with bytea as hex and floats that read back exactly.
    public init(uri: PostgresURI) throws(PostgresError) {
        let pq = try LibPQ.load()
        self.uri = uri
        self.pq = pq
        let environmentPassword = getenv("PGPASSWORD").map { String(cString: $0) }
        self.passwords = [uri.password, environmentPassword].compactMap { $0 }
        self.scrubber = SecretScrubber(passwords: passwords)

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
            try executeScript("SET bytea_output = 'hex'; SET extra_float_digits = 3; SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'")
        } catch {
            pq.finish(connection)
            throw error
        }
    }

    deinit { pq.finish(handle) }

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
    public func execute(_ sql: String, _ arguments: [SQLBindable] = []) throws {
        _ = try run(sql, arguments.map(\.sqlValue))
    }

    /// Runs a script of several statements separated by `;` (a migration). Takes no arguments.
    public func executeScript(_ sql: String) throws(PostgresError) {
        try checkSQL(sql)
        let result = pq.exec(handle, sql)
        defer { if let result { pq.clear(result) } }
        try check(result, sql: sql, boundValues: [])
    }

    /// Calls `body` for every result row.
    public func forEach(_ sql: String, _ arguments: [SQLBindable] = [], _ body: (Row) throws -> Void) throws {
        for row in try run(sql, arguments.map(\.sqlValue)) { try body(row) }
    }

    /// All result rows.
    public func rows(_ sql: String, _ arguments: [SQLBindable] = []) throws -> [Row] {
        try run(sql, arguments.map(\.sqlValue))
    }

    /// The first result row, if any.
    public func row(_ sql: String, _ arguments: [SQLBindable] = []) throws -> Row? {
        try run(sql, arguments.map(\.sqlValue)).first
    }

    /// The first column of the first row, or `.null`.
    public func scalar(_ sql: String, _ arguments: [SQLBindable] = []) throws -> SQLValue {
        guard let row = try run(sql, arguments.map(\.sqlValue)).first, !row.values.isEmpty else { return .null }
        return row[0]
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: `BEGIN` at `isolation`, `COMMIT` when `body` returns, `ROLLBACK` when it throws.
    /// Nested calls become savepoints. A statement that failed inside `body` aborts the transaction even when
    /// `body` caught the error: then nothing is committed and this throws `25P02`. Under `.serializable`, the
    /// commit itself can fail with `isSerializationFailure`; run the whole transaction again.
    @discardableResult
    public func write<T>(isolation: IsolationLevel = .readCommitted, _ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL \(isolation.rawValue)", body)
    }

    /// Runs `body` in a read-only transaction on one snapshot of the database (REPEATABLE READ READ ONLY).
    @discardableResult
    public func read<T>(_ body: () throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    private func transaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        if isInTransaction {
            savepointDepth += 1
            let name = "gatehouse_sp\(savepointDepth)"
            defer { savepointDepth -= 1 }
            try executeScript("SAVEPOINT \(name)")
            do {
                let result = try body()
                try executeScript("RELEASE SAVEPOINT \(name)")
                return result
            } catch {
                try? executeScript("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
                throw error
            }
        }
        try executeScript(begin)
        do {
            let result = try body()
            if pq.transactionStatus(handle) == PQTRANS_INERROR {
                // COMMIT would answer "ROLLBACK" without an error: say so instead of returning as if it had been written.
                throw PostgresError(kind: .statement, sqlState: PostgresSQLState.inFailedSQLTransaction,
                                    message: "the transaction was rolled back: a statement in it failed and its error was caught",
                                    store: uri.redacted)
            }
            try executeScript("COMMIT")
            return result
        } catch {
            if isInTransaction { try? executeScript("ROLLBACK") }
            throw error
        }
    }

    /// Quotes an identifier for SQL (`user` → `"user"`).
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    // MARK: - libpq

    /// Sends `sql` with `arguments` bound to `$1`…, in text format except blobs (binary bytea), and decodes the rows.
    private func run(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> [Row] {
        try checkSQL(sql)
        guard arguments.count <= 65535 else {
            throw statementError("a statement takes at most 65535 parameters, got \(arguments.count)", sql: sql)
        }
        var types: [Oid] = [], lengths: [Int32] = [], formats: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        var boundText: [String] = []
        types.reserveCapacity(arguments.count)
        defer { for buffer in buffers { free(buffer) } }
        for (offset, value) in arguments.enumerated() {
            switch value {
            case .null:
                types.append(0); lengths.append(0); formats.append(0); buffers.append(nil)
            case .integer(let int):
                types.append(PostgresType.int8); lengths.append(0); formats.append(0); buffers.append(strdup(String(int)))
            case .real(let double):
                types.append(PostgresType.float8); lengths.append(0); formats.append(0); buffers.append(strdup(Self.text(of: double)))
            case .text(let text):
                // libpq sends text parameters up to their first NUL: refuse rather than store a cut value.
                if text.utf8.contains(0) {
                    throw PostgresError(kind: .statement, sqlState: PostgresSQLState.characterNotInRepertoire,
                                        message: "parameter $\(offset + 1) is text with a NUL character (U+0000), which Postgres text cannot hold; store it as a blob (bytea)",
                                        sql: sql, store: uri.redacted)
                }
                boundText.append(text)
                types.append(0); lengths.append(0); formats.append(0); buffers.append(strdup(text))
            case .blob(let bytes):
                let buffer = malloc(max(bytes.count, 1))!.assumingMemoryBound(to: CChar.self)
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(buffer), byteCount: bytes.count) }
                types.append(PostgresType.bytea); lengths.append(Int32(bytes.count)); formats.append(1); buffers.append(buffer)
            }
        }
        let result = buffers.withUnsafeBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                pq.execParams(handle, sql, Int32(arguments.count), types, values.baseAddress, lengths, formats, 0)
            }
        }
        defer { if let result { pq.clear(result) } }
        try check(result, sql: sql, boundValues: boundText)
        guard let result else { return [] }
        changes = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return decodeRows(result)
    }

    private func decodeRows(_ result: OpaquePointer) -> [Row] {
        let rowCount = Int(pq.ntuples(result)), columnCount = Int(pq.nfields(result))
        guard columnCount > 0 else { return [] }
        let columns = ColumnIndex((0..<columnCount).map { pq.fname(result, Int32($0)).map { String(cString: $0) } ?? "?column?" })
        let types = (0..<columnCount).map { pq.ftype(result, Int32($0)) }
        var rows: [Row] = []
        rows.reserveCapacity(rowCount)
        for rowIndex in 0..<Int32(rowCount) {
            var values: [SQLValue] = []
            values.reserveCapacity(columnCount)
            for column in 0..<Int32(columnCount) {
                if pq.getisnull(result, rowIndex, column) != 0 { values.append(.null); continue }
                let count = Int(pq.getlength(result, rowIndex, column))
                let bytes = UnsafeRawBufferPointer(start: pq.getvalue(result, rowIndex, column), count: count)
                values.append(Self.value(bytes, type: types[Int(column)]))
            }
            rows.append(Row(columns: columns, values: values))
        }
        return rows
    }

    /// Throws the error a result (or its absence) reports; returns for a command or a result with rows.
    private func check(_ result: OpaquePointer?, sql: String, boundValues: [String]) throws(PostgresError) {
        let scrubber = boundValues.isEmpty ? self.scrubber : SecretScrubber(passwords: passwords, boundValues: boundValues)
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
            let connectionLost = pq.status(handle) != CONNECTION_OK
            throw PostgresError(kind: connectionLost && sqlState == nil ? .connection : .statement,
                                sqlState: sqlState, message: scrubber.scrub(message),
                                hint: field(CChar(UInt8(ascii: "H"))).map(scrubber.scrub),
                                constraint: field(CChar(UInt8(ascii: "n"))), table: field(CChar(UInt8(ascii: "t"))),
                                sql: sql, store: uri.redacted)
        }
    }

    private func checkSQL(_ sql: String) throws(PostgresError) {
        if sql.utf8.contains(0) { throw statementError("the SQL text contains a NUL character", sql: nil) }
    }

    private func statementError(_ message: String, sql: String?) -> PostgresError {
        PostgresError(kind: .statement, message: message, sql: sql, store: uri.redacted)
    }

    // MARK: - Values

    /// A double as Postgres's float8 input reads it back exactly.
    static func text(of double: Double) -> String {
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
