import Storage

/// A whole row as it was (or is) in the store: every column's stored value, and its rowid when the
/// table has one. Merge plans and records keep these so undo can write rows back exactly.
public struct MergeRowImage: Sendable, Equatable, Codable {
    /// The table.
    public let table: String
    /// The rowid, when the table has one.
    public let rowid: Int64?
    /// Column → stored value.
    public let values: [String: MergeValue]

    public init(table: String, rowid: Int64?, values: [String: MergeValue]) {
        self.table = table
        self.rowid = rowid
        self.values = values
    }

    /// A column's value (`.null` for a column the row lacks).
    public subscript(_ column: String) -> SQLValue { values[column]?.sql ?? .null }

    /// The row with some columns replaced.
    func with(_ changes: [String: MergeValue]) -> MergeRowImage {
        MergeRowImage(table: table, rowid: rowid, values: values.merging(changes) { _, new in new })
    }

    /// The columns whose values differ from another image of the same row.
    func differences(from other: MergeRowImage) -> [String] {
        Set(values.keys).union(other.values.keys).sorted().filter { self[$0] != other[$0] }
    }

    /// Every column in name order, for fingerprints (the rowid is left out: VACUUM may renumber it).
    var fingerprintText: String {
        table + "{" + values.keys.sorted().map { "\($0)=\(values[$0]!.fingerprintText)" }.joined(separator: ",") + "}"
    }
}

/// The columns and values that name one row: its primary key, or `rowid`.
public struct MergeRowKey: Sendable, Equatable, Codable, CustomStringConvertible {
    public let columns: [String]
    public let values: [MergeValue]

    /// `"id" = ? AND ...`, for the values in order.
    var whereClause: String {
        columns.map { ($0 == "rowid" ? "rowid" : SQL.quote($0)) + " = ?" }.joined(separator: " AND ")
    }

    /// `id=abc`, for messages. Key values are ids, never secrets.
    public var description: String {
        zip(columns, values).map { column, value in
            let text: String
            switch value.sql {
            case .text(let string): text = string.count > 64 ? String(string.prefix(64)) + "…" : string
            case .null: text = "NULL"
            default: text = value.sql.string ?? value.sql.typeName
            }
            return "\(column)=\(text)"
        }.joined(separator: ",")
    }
}
