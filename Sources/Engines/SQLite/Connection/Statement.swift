import CSQLite
import Storage

/// A prepared statement. Owned by one `SQLiteDatabase` and used on its thread only.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text, for error messages.
    public let sql: String
    private unowned let database: SQLiteDatabase
    /// Column names of the result, computed once.
    public private(set) lazy var columns: ColumnIndex = {
        let count = Int(sqlite3_column_count(handle))
        return ColumnIndex((0..<count).map { String(cString: sqlite3_column_name(handle, Int32($0))) })
    }()

    init(database: SQLiteDatabase, sql: String) throws {
        self.database = database
        self.sql = sql
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw database.error(code, sql: sql)
        }
        self.handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    /// Whether the statement has been stepped and not yet run to completion or reset: a cursor in use.
    public var isStepping: Bool { sqlite3_stmt_busy(handle) != 0 }

    /// Clears previous bindings and binds `arguments` to the `?` parameters in order.
    public func bind(_ arguments: [SQLValue]) throws {
        try arguments.withUnsafeBufferPointer { try bind($0) }
    }

    /// Binds a slice of a larger array (rows of a multi-row insert) without copying it.
    public func bind(_ arguments: ArraySlice<SQLValue>) throws {
        try arguments.withUnsafeBufferPointer { try bind($0) }
    }

    private func bind(_ arguments: UnsafeBufferPointer<SQLValue>) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == arguments.count else {
            throw DatabaseError(code: SQLITE_RANGE, message: "statement expects \(expected) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
            case .real(let double): code = sqlite3_bind_double(handle, index, double)
            case .text(let text):
                // An explicit byte count keeps text with an embedded NUL whole.
                var text = text
                if text.isEmpty {
                    code = sqlite3_bind_text(handle, index, "", 0, gatehouse_sqlite_transient())
                } else {
                    code = text.withUTF8 { utf8 in
                        utf8.withMemoryRebound(to: CChar.self) { chars in
                            sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), gatehouse_sqlite_transient())
                        }
                    }
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), gatehouse_sqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw database.error(code, sql: sql) }
        }
    }

    /// Runs the statement once with `arguments` for a statement that returns no rows (an insert, say), and
    /// leaves it ready to run again.
    public func execute(_ arguments: [SQLValue]) throws {
        try arguments.withUnsafeBufferPointer { try execute($0) }
    }

    /// `execute` with a slice of a larger array (rows of a multi-row insert), without copying it.
    public func execute(_ arguments: ArraySlice<SQLValue>) throws {
        try arguments.withUnsafeBufferPointer { try execute($0) }
    }

    private func execute(_ arguments: UnsafeBufferPointer<SQLValue>) throws {
        try bind(arguments)
        while try step() {}
        reset()
    }

    /// Advances to the next row; false when the statement is done.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw database.error(code, sql: sql)
        }
    }

    /// Makes the statement ready to run again (keeps bindings until the next `bind`).
    public func reset() { sqlite3_reset(handle) }

    /// The value of column `index` of the current row.
    public func value(at index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// The text of column `index` of the current row, read in place as UTF-8 bytes (no `String` is made):
    /// for scans that compare millions of keys. The bytes are valid only inside `body`.
    ///
    ///     let isEmpty = statement.withText(at: 0) { if case .text(let bytes) = $0 { bytes.isEmpty } else { false } }
    public func withText<R>(at index: Int32, _ body: (ColumnText) throws -> R) rethrows -> R {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_NULL:
            return try body(.null)
        case SQLITE_TEXT:
            // column_text before column_bytes, as SQLite's documentation asks, so that the count is of the UTF-8 form.
            let text = sqlite3_column_text(handle, index)
            let count = Int(sqlite3_column_bytes(handle, index))
            return try body(.text(UnsafeBufferPointer(start: count > 0 ? text : nil, count: text == nil ? 0 : count)))
        default:
            return try body(.notText)
        }
    }

    /// A column value as `withText(at:_:)` gives it.
    public enum ColumnText {
        case null
        case text(UnsafeBufferPointer<UInt8>)
        /// An integer, real or blob.
        case notText
    }

    /// The current row.
    public func row() -> Row {
        let count = Int32(columns.names.count)
        return Row(columns: columns, values: (0..<count).map { value(at: $0) })
    }
}
