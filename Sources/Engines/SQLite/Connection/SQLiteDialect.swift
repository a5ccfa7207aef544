import Storage

/// SQLite's answers to what SQL leaves to each engine.
public struct SQLiteDialect: SQLDialect {
    public init() {}
    public var name: String { "SQLite" }
    public var migrationsFolder: String { "sqlite" }
    /// A declared type is only an affinity: a date column's encoding is judged from a stored value.
    public var nativeTimestamps: Bool { false }
    /// SQLite compares text by its bytes (BINARY) unless a column says otherwise.
    public func byteOrdered(_ expression: String) -> String { expression }
    public func suffix(_ text: String, count: String) -> String { "substr(\(text), -(\(count)))" }
    /// The write transaction (`BEGIN IMMEDIATE`) already keeps every other writer out.
    public var lockingRead: String { "" }
    /// No column refuses a given value.
    public var insertAsItWas: String { "" }
    public var deferForeignKeys: String { "PRAGMA defer_foreign_keys = ON" }
    public var rowLocatorColumn: String { "rowid" }
    public var rowLocatorCondition: String { "rowid = ?" }
    public func rowLocator(_ value: SQLValue) -> Int64? { value.int64 }
    public func rowLocatorArgument(_ locator: Int64) -> SQLValue { .integer(locator) }
    /// SQLite has no `reverse`: the last 16 characters as they are (`substr(identifier, -16)`).
    public var suffixIndex: SuffixIndex? { SuffixIndex(lookup: .tailEquality, length: 16) { "substr(\($0), -16)" } }
    /// A B-tree entry holds a value of any length.
    public var longValueIndexMethod: String? { nil }
    /// SQLite's `LIKE` ignores the case of ASCII letters.
    public var likeIgnoringCase: String { "LIKE" }
    /// 32,766 (SQLITE_MAX_VARIABLE_NUMBER since 3.32): beyond any statement Gatehouse makes.
    public var maxBoundParameters: Int? { nil }
}
