@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// migrations/postgres says what migrations/sqlite says: after both sets are applied, Gatehouse's tables and the
/// sync server's have the same columns in the same order with the same nullability and defaults' presence, the same
/// named indexes (with their uniqueness and columns) and the same triggers. Better Auth's tables differ by design
/// (each engine gets what Better Auth's own migration makes there) and are compared in PostgresMigratorTests.
final class MigrationParityTests: XCTestCase {
    struct TableShape: Equatable, CustomStringConvertible {
        var columns: [String]
        var indexes: [String]
        var description: String { "columns \(columns)\nindexes \(indexes)" }
    }

    func sqliteShapes() throws -> [String: TableShape] {
        let directory = NSTemporaryDirectory() + "gh-parity-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let db = try SQLiteDatabase(path: directory + "/s.sqlite", options: .init(create: true))
        let catalog = try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "sqlite"))
        try Migrator().migrate(db, catalog.migrations, now: "2026-12-01T00:00:00.000Z")
        var shapes: [String: TableShape] = [:]
        for table in try db.tableNames() where !StoreConfiguration.betterAuthTables.contains(table) {
            let info = try db.rows("SELECT name, \"notnull\", pk, dflt_value IS NOT NULL AS has_default FROM pragma_table_info(?)", [table])
            let columns = try info.map { row -> String in
                // SQLite's PRIMARY KEY columns may hold NULL only by a historical quirk; Postgres's never: both not null.
                let notNull = try row.bool("notnull") || row.int("pk") > 0
                return "\(try row.string("name")) \(notNull ? "not null" : "null")\(row.bool("has_default") ? " default" : "")"
            }
            let indexes = try db.rows("""
                SELECT l.name AS name, l."unique" AS is_unique, (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno)) AS cols
                FROM pragma_index_list(?) l WHERE l.origin = 'c' ORDER BY l.name
                """, [table]).map { "\(try $0.string("name")) \($0.bool("is_unique") ? "unique " : "")(\(try $0.string("cols")))" }
            shapes[table] = TableShape(columns: columns, indexes: indexes)
        }
        return shapes
    }

    func postgresShapes(_ db: PostgresConnection) throws -> [String: TableShape] {
        var shapes: [String: TableShape] = [:]
        for table in try db.tableNames() where !StoreConfiguration.betterAuthTables.contains(table) {
            let columns = try db.rows("""
                SELECT column_name, is_nullable = 'NO' AS not_null, (column_default IS NOT NULL OR is_identity = 'YES') AS has_default
                FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
                """, [table]).map { row -> String in
                    // An identity column stands for SQLite's rowid alias, which assigns ids without a declared default.
                    let identity = try db.scalar("SELECT is_identity FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2",
                                                 [table, try row.string("column_name")]).string == "YES"
                    let hasDefault = row.bool("has_default") && !identity
                    return "\(try row.string("column_name")) \(row.bool("not_null") ? "not null" : "null")\(hasDefault ? " default" : "")"
                }
            // Indexes a CREATE INDEX named; those behind PRIMARY KEY and UNIQUE constraints are SQLite's autoindexes.
            let indexes = try db.rows("""
                SELECT i.relname AS name, x.indisunique AS is_unique,
                       (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
                        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum) AS cols
                FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                WHERE x.indrelid = to_regclass($1) AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
                ORDER BY i.relname
                """, [PostgresConnection.quote(table)]).map { "\(try $0.string("name")) \($0.bool("is_unique") ? "unique " : "")(\(try $0.string("cols")))" }
            shapes[table] = TableShape(columns: columns, indexes: indexes)
        }
        return shapes
    }

    func testPostgresTablesMatchTheSQLiteTables() throws {
        try TestPostgres.withFreshSchema { db, _ in
            let catalog = try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "postgres"))
            try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: "2026-12-01T00:00:00.000Z")
            let sqlite = try sqliteShapes(), postgres = try postgresShapes(db)
            XCTAssertEqual(postgres.keys.sorted(), sqlite.keys.sorted())
            XCTAssertEqual(sqlite.count, 45, "gatehouse_migrations, the sync server's 4 tables and Gatehouse's 40")
            XCTAssertEqual(postgres["gatehouse_apple_refusals"]?.indexes, ["gatehouse_apple_refusals_last_seen_idx (last_seen)"])
            XCTAssertEqual(postgres["gatehouse_apple_notifications"]?.indexes, ["gatehouse_apple_notifications_once unique (jti,sub,type)",
                                                                              "gatehouse_apple_notifications_sub_idx (sub,id)"])
            XCTAssertEqual(postgres["gatehouse_audit"]?.columns, ["id not null", "at not null", "actor not null", "action not null", "subject null",
                                                                "details not null default", "prev_hash not null", "hash not null"])
            XCTAssertEqual(postgres["gatehouse_apple_keys"]?.indexes, ["gatehouse_apple_keys_one_active unique (state)"])
            XCTAssertEqual(postgres["gatehouse_tokens"]?.indexes, ["gatehouse_tokens_admin_idx (admin_id)", "gatehouse_tokens_expires_idx (expires_at)",
                                                                 "gatehouse_tokens_family_idx (family_id)"])
            for table in sqlite.keys.sorted() {
                XCTAssertEqual(postgres[table], sqlite[table], table)
            }
        }
    }

    func testPostgresTriggersMatchTheSQLiteTriggersPlusTruncate() throws {
        let directory = NSTemporaryDirectory() + "gh-parity-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sqliteDB = try SQLiteDatabase(path: directory + "/s.sqlite", options: .init(create: true))
        try Migrator().migrate(sqliteDB, MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "sqlite")).migrations, now: "now")
        let sqliteTriggers = try sqliteDB.rows("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").map { try $0.string("name") }
        try TestPostgres.withFreshSchema { db, _ in
            try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "postgres"))
                .migrate(postgres: db, configuration: StoreConfiguration(), now: "now")
            let triggers = try db.rows("""
                SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE c.relnamespace = current_schema()::regnamespace AND NOT tgisinternal AND tgname NOT LIKE '%_no_truncate' ORDER BY 1
                """).map { try $0.string("tgname") }
            XCTAssertEqual(triggers, sqliteTriggers)
        }
    }
}
