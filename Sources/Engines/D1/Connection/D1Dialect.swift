import SQLiteEngine
import Storage

/// D1 speaks SQLite's SQL: its answers are SQLite's, but for rowids.
public struct D1Dialect: SQLDialect {
    private let sqlite = SQLiteDialect()
    public init() {}
    public var name: String { "D1" }
    public var migrationsFolder: String { sqlite.migrationsFolder }
    public var nativeTimestamps: Bool { sqlite.nativeTimestamps }
    public func byteOrdered(_ expression: String) -> String { sqlite.byteOrdered(expression) }
    public func suffix(_ text: String, count: String) -> String { sqlite.suffix(text, count: count) }
    public var lockingRead: String { sqlite.lockingRead }
    public var insertAsItWas: String { sqlite.insertAsItWas }
    public var deferForeignKeys: String { sqlite.deferForeignKeys }
    public var rowLocatorColumn: String { sqlite.rowLocatorColumn }
    public var rowLocatorCondition: String { sqlite.rowLocatorCondition }
    public func rowLocator(_ value: SQLValue) -> Int64? { sqlite.rowLocator(value) }
    public func rowLocatorArgument(_ locator: Int64) -> SQLValue { sqlite.rowLocatorArgument(locator) }
    /// None: Gatehouse makes no suffix index on D1, and a lookup by the end of a value reads every row.
    public var suffixIndex: SuffixIndex? { nil }
    public var longValueIndexMethod: String? { sqlite.longValueIndexMethod }
    public var likeIgnoringCase: String { sqlite.likeIgnoringCase }
    /// D1's limit on a statement's parameters (`D1Statement.maxParameters`), less room for a statement's own.
    public var maxBoundParameters: Int? { D1Statement.maxParameters - 20 }
}
