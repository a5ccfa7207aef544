import Storage

/// Postgres's answers to what SQL leaves to each engine.
public struct PostgresDialect: SQLDialect {
    public init() {}
    public var name: String { "Postgres" }
    public var migrationsFolder: String { "postgres" }
    /// `timestamp`, `timestamptz` and `date` columns hold Postgres's own date values.
    public var nativeTimestamps: Bool { true }
    /// Databases usually sort by a language's rules; `COLLATE "C"` is byte order.
    public func byteOrdered(_ expression: String) -> String { "\(expression) COLLATE \"C\"" }
    /// `right(text, count)` reads each value once (recomputing the start from `length` would read it twice).
    public func suffix(_ text: String, count: String) -> String { "right(\(text), \(count))" }
    public var lockingRead: String { " FOR UPDATE" }
    /// A `GENERATED ALWAYS` identity column refuses a given value without it (any table accepts the clause).
    public var insertAsItWas: String { " OVERRIDING SYSTEM VALUE" }
    /// Defers the keys declared DEFERRABLE (the others are checked per statement, so writes keep parents first).
    public var deferForeignKeys: String { "SET CONSTRAINTS ALL DEFERRED" }
    /// Block and line, packed by `rowLocator(_:)`.
    public var rowLocatorColumn: String { "ctid" }
    public var rowLocatorCondition: String { "ctid = CAST(? AS tid)" }
    /// "(block,line)": a 32-bit block and a 16-bit line, packed as one integer.
    public func rowLocator(_ value: SQLValue) -> Int64? {
        guard let text = value.string, text.hasPrefix("("), text.hasSuffix(")") else { return nil }
        let parts = text.dropFirst().dropLast().split(separator: ",")
        guard parts.count == 2, let block = Int64(parts[0]), let line = Int64(parts[1]) else { return nil }
        return block << 16 | line
    }
    public func rowLocatorArgument(_ locator: Int64) -> SQLValue { .text("(\(locator >> 16),\(locator & 0xFFFF))") }
    /// The last 256 characters reversed, in byte order: a key of at most 1 KB, well within a B-tree entry.
    public var suffixIndex: SuffixIndex? { SuffixIndex(lookup: .reversedRange, length: 256) { "left(reverse(\($0)), 256) COLLATE \"C\"" } }
    /// A B-tree entry holds about 2.7 KB; a value (a JSON state, a token) may be longer.
    public var longValueIndexMethod: String? { "hash" }
    /// Not `lower(column) LIKE`: Postgres has no statistics for the expression, guesses few matches and sorts a full
    /// scan instead of reading the sort's index until a page is full.
    public var likeIgnoringCase: String { "ILIKE" }
    /// 65,535 a statement: beyond any statement Gatehouse makes.
    public var maxBoundParameters: Int? { nil }
}
