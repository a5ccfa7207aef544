import Foundation
import Storage

/// How a merge reads, addresses and writes back the rows of one table: its columns in order, the
/// key that names a row (the primary key, or the rowid for a table without one), and whether the
/// table has a rowid of its own that undo must give back to a re-inserted row.
public struct MergeTableShape: Sendable, Equatable {
    /// The table.
    public let name: String
    /// Its columns, in order.
    public let columns: [String]
    /// The primary-key columns in key order; empty when rows are named by rowid.
    public let keyColumns: [String]
    /// False for a `WITHOUT ROWID` table.
    public let hasRowid: Bool
    /// True when the primary key is an `INTEGER PRIMARY KEY`, i.e. the rowid itself.
    public let rowidIsKey: Bool

    /// Reads a table's shape.
    public static func read(_ db: SQLDatabase, table: String) throws -> MergeTableShape {
        try shape(db, table: table, columns: try db.columns(of: table))
    }

    /// The shapes of several tables, their columns read in one question. Tables that do not exist, or that a merge
    /// cannot name rows of, are left out: `read(_:table:)` says why when one is needed.
    static func read(_ db: SQLDatabase, tables: [String]) throws -> [String: MergeTableShape] {
        var shapes: [String: MergeTableShape] = [:]
        for (table, columns) in try db.columns(ofEach: tables) { shapes[table] = try? shape(db, table: table, columns: columns) }
        return shapes
    }

    private static func shape(_ db: SQLDatabase, table: String, columns info: [ColumnInfo]) throws -> MergeTableShape {
        guard !info.isEmpty else { throw GatehouseError.notFound("table \"\(table)\" does not exist") }
        let keys = info.filter { $0.primaryKeyPosition > 0 }.sorted { $0.primaryKeyPosition < $1.primaryKeyPosition }
        guard try db.rowidNamesRows(of: table) else {
            // Without a lasting rowid a merge names rows by primary key.
            guard !keys.isEmpty else {
                throw GatehouseError("table \"\(table)\" has no primary key, so a merge cannot name its rows on \(db.dialect.name); nothing was changed",
                                     fix: "give the table a primary key, or merge these two users by hand")
            }
            return MergeTableShape(name: table, columns: info.map(\.name), keyColumns: keys.map(\.name), hasRowid: false, rowidIsKey: false)
        }
        let integerKey = keys.count == 1 && keys[0].declaredType.uppercased() == "INTEGER"
        return MergeTableShape(name: table, columns: info.map(\.name), keyColumns: keys.map(\.name), hasRowid: true, rowidIsKey: integerKey)
    }

    /// The quoted table name.
    var sql: String { SQL.quote(name) }

    /// `rowid, "a", "b"`: what every read selects, so an image holds the whole row.
    var selectList: String {
        (hasRowid ? "rowid, " : "") + columns.map(SQL.quote).joined(separator: ", ")
    }

    /// The row's image from a result selected with `selectList`.
    func image(_ row: Row) -> MergeRowImage {
        let offset = hasRowid ? 1 : 0
        var values: [String: MergeValue] = [:]
        for (index, column) in columns.enumerated() { values[column] = MergeValue(row[index + offset]) }
        return MergeRowImage(table: name, rowid: hasRowid ? row[0].int64 : nil, values: values)
    }

    /// The rows whose `column` is `value`, as full images, in key order; with `locking`, locked until the
    /// transaction ends (`SQLDialect.lockingRead`).
    func rows(_ db: SQLDatabase, locking: Bool = false, where column: String, is value: SQLValue) throws -> [MergeRowImage] {
        guard !value.isNull else { return [] }
        return try db.rows(rowsSQL(db, locking: locking, where: [column]), [value]).map(image)
    }

    /// The statement of `rows(_:locking:where:is:)` for rows whose `columns` all hold given values: one placeholder
    /// per column, in order.
    func rowsSQL(_ db: SQLDatabase, locking: Bool, where columns: [String]) -> String {
        let condition = columns.map { "\(SQL.quote($0)) = ?" }.joined(separator: " AND ")
        return "SELECT \(selectList) FROM \(sql) WHERE \(condition) ORDER BY \(orderList)\(locking ? db.dialect.lockingRead : "")"
    }

    /// The key that names a row.
    func key(of image: MergeRowImage) -> MergeRowKey {
        if keyColumns.isEmpty { return MergeRowKey(columns: ["rowid"], values: [MergeValue(image.rowid.map { .integer($0) } ?? .null)]) }
        return MergeRowKey(columns: keyColumns, values: keyColumns.map { MergeValue(image[$0]) })
    }

    /// The row a key names now, if any.
    func current(_ db: SQLDatabase, key: MergeRowKey) throws -> MergeRowImage? {
        try db.row("SELECT \(selectList) FROM \(sql) WHERE \(key.whereClause)", key.values.map(\.sql)).map(image)
    }

    var orderList: String { keyColumns.isEmpty ? "rowid" : keyColumns.map(SQL.quote).joined(separator: ", ") }
}
