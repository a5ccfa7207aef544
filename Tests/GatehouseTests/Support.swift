@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A temporary directory per test.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func sql(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// A database made from a fixture script, as Better Auth (or Drizzle) would have left it.
    static func database(_ name: String, at path: String) throws {
        let db = try SQLiteDatabase(path: path, options: .init(create: true))
        try db.executeScript(sql(name))
    }
}

/// Every row of the named tables, as text, for before/after comparisons.
func dump(_ db: SQLDatabase, tables: [String]) throws -> [String] {
    try tables.flatMap { table in
        // Sorted text, not rowid order: some tables are WITHOUT ROWID.
        try db.rows("SELECT * FROM \(SQL.quote(table))").map { row in
            table + ":" + row.values.map { "\($0)" }.joined(separator: "|")
        }.sorted()
    }
}

/// The CREATE statements of the named tables and their indexes.
func ddl(_ db: SQLDatabase, tables: [String]) throws -> [String] {
    try tables.flatMap { table in
        // Gatehouse's own indexes (gatehouse_*) are the one addition allowed on Better Auth's tables.
        try db.rows("SELECT sql FROM sqlite_master WHERE tbl_name = ? AND name NOT LIKE 'gatehouse\\_%' ESCAPE '\\' ORDER BY name", [table]).compactMap { $0[0].string }
    }
}

let tester = Actor("tester")

/// Records a merge of `source` into `target` the way `merge apply` does, with a stand-in plan and undo data.
func recordMerge(_ db: SQLDatabase, id: Int64 = 1, source: String, target: String, undoData: String = "{}") throws {
    try db.execute("""
        INSERT INTO gatehouse_merge_plans (id, fingerprint, source_user_id, target_user_id, decisions, created_at, actor, plan)
        VALUES (?, 'fp', ?, ?, '{}', '2026-01-01T00:00:00.000Z', 'tester', '{}')
        """, ["mp_\(id)", source, target])
    try db.execute("""
        INSERT INTO gatehouse_merges (id, plan_id, source_user_id, target_user_id, ticket, actor, status, planned_at, applied_at, undo_data)
        VALUES (?, ?, ?, ?, 'T-1', 'tester', 'applied', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', ?)
        """, [id, "mp_\(id)", source, target, undoData])
}
