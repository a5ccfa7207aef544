import CSQLite
import Storage

/// An error from SQLite, with everything needed to act on it.
///
/// Bound values are deliberately not kept: they may be secrets (sealed keys, token hashes),
/// and errors end up in logs and on terminals.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    public let code: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, ...).
    public let extendedCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The database file involved, if known.
    public let path: String?

    public init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
        self.path = path
    }

    init(connection: OpaquePointer?, code: Int32, sql: String?, path: String?) {
        // Connections are opened with extended codes on: the primary code is the low byte.
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: code & 0xff, extendedCode: extended, message: message, sql: sql, path: path)
    }

    /// Whether another connection holds the lock this one needed.
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    /// Whether a constraint (unique, foreign key, not null, check) refused the change.
    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }
    /// Whether SQLite found the file damaged (`SQLITE_CORRUPT`) or not a database at all (`SQLITE_NOTADB`).
    public var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
    /// Whether the database, its journal or its folder cannot be written by this connection.
    public var isReadOnly: Bool { code == SQLITE_READONLY }
    /// Whether the disk (or the quota) ran out while writing.
    public var isDiskFull: Bool { code == SQLITE_FULL }
    /// Whether the file could not be opened at all (missing folder, permissions, a directory).
    public var isCannotOpen: Bool { code == SQLITE_CANTOPEN }
    /// Whether the failure was a UNIQUE or PRIMARY KEY constraint.
    public var isUniqueViolation: Bool {
        extendedCode == SQLiteCode.constraintUnique || extendedCode == SQLiteCode.constraintPrimaryKey
    }

    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code { text += " (extended \(extendedCode))" }
        text += ": \(message)"
        if let path { text += " [\(path)]" }
        if let sql { text += " while running: \(sql)" }
        return text
    }
}

/// Extended result codes that do not import into Swift (they are macros built from shifts).
public enum SQLiteCode {
    public static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)
    public static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)
    public static let constraintNotNull: Int32 = SQLITE_CONSTRAINT | (5 << 8)
    public static let constraintCheck: Int32 = SQLITE_CONSTRAINT | (1 << 8)
    public static let busySnapshot: Int32 = SQLITE_BUSY | (2 << 8)
}

extension DatabaseError: SQLFailure {}
