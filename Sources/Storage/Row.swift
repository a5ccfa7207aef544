/// One result row, read by column name.
///
///     let email = try row.string("email")
public struct Row: Sendable {
    /// Column names in result order; shared by every row of one statement.
    public let columns: ColumnIndex
    /// Values in result order.
    public let values: [SQLValue]

    public init(columns: ColumnIndex, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the named column, or `.null` when the result has no such column.
    public subscript(_ name: String) -> SQLValue {
        guard let index = columns.index(of: name) else { return .null }
        return values[index]
    }

    /// The value at a position.
    public subscript(_ index: Int) -> SQLValue { values[index] }

    /// Whether the result has this column at all.
    public func has(_ name: String) -> Bool { columns.index(of: name) != nil }

    /// A non-null text column, or a `RowDecodingError`.
    public func string(_ name: String) throws -> String {
        guard let value = self[name].string else { throw RowDecodingError(column: name, expected: "text", found: self[name]) }
        return value
    }

    /// A text column that may be null.
    public func optionalString(_ name: String) -> String? { self[name].string }

    /// A non-null integer column, or a `RowDecodingError`.
    public func int(_ name: String) throws -> Int {
        guard let value = self[name].int64 else { throw RowDecodingError(column: name, expected: "integer", found: self[name]) }
        return Int(value)
    }

    /// An integer column that may be null.
    public func optionalInt(_ name: String) -> Int? { self[name].int64.map(Int.init) }

    /// A boolean stored as 0/1 (Better Auth's encoding), or "true"/"false" text.
    public func bool(_ name: String) -> Bool {
        switch self[name] {
        case .integer(let value): return value != 0
        case .real(let value): return value != 0
        case .text(let value): return value == "1" || value.lowercased() == "true"
        default: return false
        }
    }

    /// A blob column, or a `RowDecodingError`.
    public func blob(_ name: String) throws -> [UInt8] {
        guard case .blob(let bytes) = self[name] else { throw RowDecodingError(column: name, expected: "blob", found: self[name]) }
        return bytes
    }

    /// The row as name/value pairs, in column order.
    public var pairs: [(String, SQLValue)] { Array(zip(columns.names, values)) }
}

/// The names of a result's columns, and for a wide result a lookup table built once per statement.
public final class ColumnIndex: Sendable {
    public let names: [String]
    /// Name → first position; nil for a few columns, which are found by comparing names (cheaper than hashing
    /// them into a table built for every result).
    private let positions: [String: Int]?

    public init(_ names: [String]) {
        self.names = names
        guard names.count > Self.scanned else { positions = nil; return }
        var positions = [String: Int]()
        for (index, name) in names.enumerated() where positions[name] == nil { positions[name] = index }
        self.positions = positions
    }

    /// Up to this many columns, a name is looked for by comparing.
    static let scanned = 16

    public func index(of name: String) -> Int? { positions.map { $0[name] } ?? names.firstIndex(of: name) }
}

/// A column did not hold the type the reader expected.
public struct RowDecodingError: Error, CustomStringConvertible {
    public let column: String
    public let expected: String
    public let found: SQLValue

    public var description: String { "column \"\(column)\" holds \(found.typeName), expected \(expected)" }
}
