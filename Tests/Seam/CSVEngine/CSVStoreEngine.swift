import Foundation
import Gatehouse
import SQLiteEngine
import Storage

/// A toy fourth engine, kept in the test tree to show that an engine is a written list (`Tests/Seam/fourth_engine.sh`
/// adds it as `Sources/Engines/CSV/`): a read-only snapshot of a store as a folder of CSV files, named
/// `csv:/path/to/folder`. The folder holds `schema.sql` (the tables' DDL) and `<table>.csv` for each table (a header
/// of column names, RFC 4180 quoting, `\N` for NULL), as `sqlite3 -csv -header -nullvalue '\N'` writes them. Opening
/// loads it into an in-memory SQLite database made read-only, so it speaks SQLite's dialect through SQLite's
/// connection; every read job works on it, and every write is refused.
struct CSVStoreEngine: StoreEngine {
    /// The folder.
    let folder: String

    static func claims(_ text: String) -> Bool { text.lowercased().hasPrefix("csv:") }
    static var namesServer: Bool { true }
    static var uriSchemes: [String] { ["csv"] }
    static var uriHint: String? { "a CSV snapshot as csv:/path/to/folder" }
    static var dialectName: String { SQLiteDialect().name }

    init(location text: String) throws {
        let path = String(text.dropFirst("csv:".count))
        guard path.hasPrefix("/") else {
            throw GatehouseError.invalid("a CSV snapshot is named csv: and its folder's absolute path", fix: "write csv:/path/to/folder")
        }
        folder = path
    }

    var shownLocation: String { "csv:" + folder }
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { nil }
    var hasSearchPath: Bool { false }
    var connectionsAreShared: Bool { false }
    var masterKeyPath: String { folder + "/master.key" }
    var createsPrivateKeyFolder: Bool { false }
    var rowEstimator: (any RowCountEstimating)? { nil }
    var rowsPerWrite: Int? { nil }
    var accountSweep: AccountSweep? { nil }
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? { nil }

    func freeConnections(_ db: SQLDatabase) throws -> Int? { nil }
    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase { try load() }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        (try load(), try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath))
    }

    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        throw GatehouseError("\(shownLocation) is a CSV snapshot: it is read-only", fix: "run init on the store itself", code: .readOnly)
    }

    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        { HealthCheck(id: "store.integrity", status: .ok, summary: "a CSV snapshot, loaded whole: nothing on disk to check") }
    }

    func checkCanSeedDemo(_ store: Store) throws {
        throw GatehouseError("\(shownLocation) is a CSV snapshot: it is read-only", fix: "seed a SQLite file", code: .readOnly)
    }

    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad { BatchSeedLoad() }
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? { nil }
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? { nil }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.sqliteScript(for: plan, at: time) }

    /// The snapshot in a new in-memory SQLite database, made read-only.
    private func load() throws -> SQLDatabase {
        guard let schema = FileManager.default.contents(atPath: folder + "/schema.sql") else {
            throw GatehouseError.notFound("no CSV snapshot at \(shownLocation) (it has no schema.sql)", fix: "export one into that folder")
        }
        var options = SQLiteDatabase.Options(create: true, journalModeWAL: false)
        options.inMemory = true
        let db = try SQLiteDatabase(path: folder, options: options)
        try db.executeScript(String(decoding: schema, as: UTF8.self))
        try db.write {
            // Tables load in name order, children before their parents at times: keys are checked at the commit.
            try db.execute(db.dialect.deferForeignKeys)
            for table in try db.tableNames() {
                guard let data = FileManager.default.contents(atPath: folder + "/\(table).csv") else { continue }
                var records = CSV.records(String(decoding: data, as: UTF8.self))
                guard !records.isEmpty else { continue }
                let header = records.removeFirst()
                let sql = "INSERT INTO \(SQL.quote(table)) (\(header.map(SQL.quote).joined(separator: ", "))) VALUES (\(header.map { _ in "?" }.joined(separator: ", ")))"
                for record in records where record.count == header.count {
                    try db.execute(sql, record.map { $0 == "\\N" ? SQLValue.null : SQLValue.text($0) })
                }
            }
        }
        try db.execute("PRAGMA query_only = ON")
        return db
    }
}

/// RFC 4180 records: fields split by commas, a quoted field may hold commas, newlines and doubled quotes.
enum CSV {
    static func records(_ text: String) -> [[String]] {
        var records: [[String]] = [], record: [String] = [], field = "", quoted = false, atStart = true
        var characters = Array(text.unicodeScalars)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" { field.unicodeScalars.append(c); characters.removeFirst() } else { quoted = false }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                record.append(field); field = ""
            } else if c == "\n" || c == "\r" {
                if c == "\r", characters.first == "\n" { characters.removeFirst() }
                record.append(field); field = ""
                records.append(record); record = []
            } else {
                field.unicodeScalars.append(c)
            }
            atStart = false
        }
        if !atStart && (!field.isEmpty || !record.isEmpty) { record.append(field); records.append(record) }
        return records
    }
}
