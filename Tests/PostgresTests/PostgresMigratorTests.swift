@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// migrations/postgres applied by PostgresMigrator against the real cluster: Better Auth 1.7's tables in an empty
/// database exactly as Better Auth's own Postgres migration makes them, Gatehouse's tables beside an existing
/// Better Auth database without touching it, each migration once, edited ones refused.
final class PostgresMigratorTests: XCTestCase {
    let now = "2026-12-01T21:00:00.000Z"

    func catalog() throws -> MigrationCatalog {
        try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "postgres"))
    }

    /// Better Auth 1.7's tables as its Kysely migration creates them on Postgres (get-migration.ts at v1.7.1:
    /// string → text, boolean → boolean, date → timestamptz with `DEFAULT CURRENT_TIMESTAMP` where the field has
    /// a default function, ids text): table, column, data_type, nullable, default.
    static let betterAuth17Columns: [[String]] = [
        ["account", "id", "text", "NO", ""], ["account", "issuer", "text", "NO", ""], ["account", "accountId", "text", "NO", ""],
        ["account", "providerId", "text", "NO", ""], ["account", "userId", "text", "NO", ""], ["account", "accessToken", "text", "YES", ""],
        ["account", "refreshToken", "text", "YES", ""], ["account", "idToken", "text", "YES", ""],
        ["account", "accessTokenExpiresAt", "timestamp with time zone", "YES", ""],
        ["account", "refreshTokenExpiresAt", "timestamp with time zone", "YES", ""],
        ["account", "scope", "text", "YES", ""], ["account", "password", "text", "YES", ""],
        ["account", "createdAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
        ["account", "updatedAt", "timestamp with time zone", "NO", ""],
        ["session", "id", "text", "NO", ""], ["session", "expiresAt", "timestamp with time zone", "NO", ""],
        ["session", "token", "text", "NO", ""], ["session", "createdAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
        ["session", "updatedAt", "timestamp with time zone", "NO", ""], ["session", "ipAddress", "text", "YES", ""],
        ["session", "userAgent", "text", "YES", ""], ["session", "userId", "text", "NO", ""],
        ["user", "id", "text", "NO", ""], ["user", "name", "text", "NO", ""], ["user", "email", "text", "NO", ""],
        ["user", "emailVerified", "boolean", "NO", ""], ["user", "image", "text", "YES", ""],
        ["user", "createdAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
        ["user", "updatedAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
        ["verification", "id", "text", "NO", ""], ["verification", "identifier", "text", "NO", ""],
        ["verification", "value", "text", "NO", ""], ["verification", "expiresAt", "timestamp with time zone", "NO", ""],
        ["verification", "createdAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
        ["verification", "updatedAt", "timestamp with time zone", "NO", "CURRENT_TIMESTAMP"],
    ]

    /// Its indexes: the primary keys and inline `unique` constraints Postgres names itself, the field indexes and
    /// the unique (issuer, "accountId") index Better Auth names.
    static let betterAuth17Indexes: [[String]] = [
        ["account", "account_issuer_accountId_uidx", #"CREATE UNIQUE INDEX "account_issuer_accountId_uidx" ON public.account USING btree (issuer, "accountId")"#],
        ["account", "account_pkey", "CREATE UNIQUE INDEX account_pkey ON public.account USING btree (id)"],
        ["account", "account_userId_idx", #"CREATE INDEX "account_userId_idx" ON public.account USING btree ("userId")"#],
        ["session", "session_pkey", "CREATE UNIQUE INDEX session_pkey ON public.session USING btree (id)"],
        ["session", "session_token_key", "CREATE UNIQUE INDEX session_token_key ON public.session USING btree (token)"],
        ["session", "session_userId_idx", #"CREATE INDEX "session_userId_idx" ON public.session USING btree ("userId")"#],
        ["user", "user_email_key", #"CREATE UNIQUE INDEX user_email_key ON public."user" USING btree (email)"#],
        ["user", "user_pkey", #"CREATE UNIQUE INDEX user_pkey ON public."user" USING btree (id)"#],
        ["verification", "verification_identifier_idx", "CREATE INDEX verification_identifier_idx ON public.verification USING btree (identifier)"],
        ["verification", "verification_pkey", "CREATE UNIQUE INDEX verification_pkey ON public.verification USING btree (id)"],
    ]

    static let betterAuth17ForeignKeys: [[String]] = [
        ["account", #"FOREIGN KEY ("userId") REFERENCES "user"(id) ON DELETE CASCADE"#],
        ["session", #"FOREIGN KEY ("userId") REFERENCES "user"(id) ON DELETE CASCADE"#],
    ]

    static let betterAuthTables = "('user', 'session', 'account', 'verification')"

    func columns(_ db: PostgresConnection) throws -> [[String]] {
        try db.rows("""
            SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, '') AS "default"
            FROM information_schema.columns WHERE table_schema = current_schema() AND table_name IN \(Self.betterAuthTables)
            ORDER BY table_name, ordinal_position
            """).map { row in (0..<5).map { row[$0].string ?? "" } }
    }

    func indexes(_ db: PostgresConnection) throws -> [[String]] {
        try db.rows("""
            SELECT tablename, indexname, indexdef FROM pg_indexes
            WHERE schemaname = current_schema() AND tablename IN \(Self.betterAuthTables) ORDER BY tablename, indexname
            """).map { row in (0..<3).map { row[$0].string ?? "" } }
    }

    func foreignKeys(_ db: PostgresConnection) throws -> [[String]] {
        try db.rows("""
            SELECT c.conrelid::regclass::text AS "table", pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
            WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
              AND c.conrelid::regclass::text IN ('"user"', 'session', 'account', 'verification') ORDER BY 1, 2
            """).map { row in (0..<2).map { row[$0].string ?? "" } }
    }

    /// Everything a schema holds that a migration could change: tables, columns, indexes, triggers, and the records.
    func snapshot(_ db: PostgresConnection) throws -> [String] {
        let parts = try db.rows("""
            SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
              FROM information_schema.columns WHERE table_schema = current_schema()
            UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
            UNION ALL SELECT 'trigger ' || tgname || ' ' || tgrelid::regclass::text FROM pg_trigger t
              JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT tgisinternal
            ORDER BY 1
            """).map { $0[0].string ?? "" }
        let records = try db.rows("SELECT id, name, checksum, applied_at, ran FROM gatehouse_migrations ORDER BY id").map {
            "record \($0[0].int64 ?? 0) \($0[1].string ?? "") \($0[2].string ?? "") \($0[3].string ?? "") \($0[4].int64 ?? -1)"
        }
        return parts + records
    }

    func testAFreshDatabaseGetsBetterAuth17TablesAsBetterAuthsPostgresMigrationMakesThem() throws {
        try TestPostgres.withFreshDatabase { db in
            let catalog = try catalog()
            let applied = try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            XCTAssertEqual(applied.map(\.id), catalog.migrations.map(\.id))
            XCTAssertEqual(try PostgresMigrator().applied(db).filter { !$0.ran }.map(\.name), [], "nothing is skipped in an empty database")
            XCTAssertEqual(try columns(db), Self.betterAuth17Columns)
            XCTAssertEqual(try indexes(db), Self.betterAuth17Indexes)
            XCTAssertEqual(try foreignKeys(db), Self.betterAuth17ForeignKeys)
            for table in ["users", "workspaces", "subscriptions", "allow_list", "gatehouse_audit", "gatehouse_policy", "gatehouse_policy_version",
                          "gatehouse_policy_history", "gatehouse_health_runs", "gatehouse_admins", "gatehouse_tokens", "gatehouse_login_failures",
                          "gatehouse_apple_keys", "gatehouse_provider_config", "gatehouse_tracked_secrets", "gatehouse_merge_plans", "gatehouse_merges",
                          "gatehouse_gate_requirements", "gatehouse_gates", "gatehouse_gate_history", "gatehouse_migrations",
                          "gatehouse_admin_factors", "gatehouse_recovery_codes", "gatehouse_mfa_challenges", "gatehouse_console_settings"] {
                XCTAssertTrue(try db.tableExists(table), table)
            }
            // Better Auth's tables take rows as Better Auth writes them: ISO text dates, native booleans, defaults.
            try db.execute(#"INSERT INTO "user" (id, name, email, "emailVerified") VALUES ('u1', 'Ada', 'ada@example.com', false)"#)
            try db.execute(#"INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "updatedAt") VALUES ('a1', 'https://appleid.apple.com', '001', 'apple', 'u1', $1)"#, [now])
            XCTAssertThrowsError(try db.execute(#"INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "updatedAt") VALUES ('a2', 'https://appleid.apple.com', '001', 'apple', 'u1', $1)"#, [now])) {
                XCTAssertEqual(($0 as? PostgresError)?.constraint, "account_issuer_accountId_uidx")
            }
            XCTAssertEqual(try db.scalar("SELECT version FROM gatehouse_policy_version WHERE id = 1").int64, 0)
        }
    }

    func testApplyingTwiceChangesNothing() throws {
        try TestPostgres.withFreshSchema { db, _ in
            let catalog = try catalog()
            try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            let before = try snapshot(db)
            XCTAssertEqual(try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: "2027-01-01T00:00:00.000Z"), [])
            XCTAssertEqual(try PostgresMigrator().pending(db, catalog.migrations), [])
            XCTAssertEqual(try snapshot(db), before)
        }
    }

    func testAnEditedMigrationIsRefusedAndNothingChanges() throws {
        try TestPostgres.withFreshSchema { db, _ in
            let catalog = try catalog()
            try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            let before = try snapshot(db)
            var migrations = catalog.migrations
            let audit = migrations[2]
            migrations[2] = Migration(id: audit.id, name: audit.name, sql: audit.sql + "\nCREATE INDEX extra ON gatehouse_audit (actor);",
                                      checksum: String(repeating: "0", count: 64))
            XCTAssertThrowsError(try PostgresMigrator().migrate(db, migrations, now: now)) {
                XCTAssertEqual($0 as? MigrationError, .edited(id: 3, name: "0003_gatehouse_audit", recorded: audit.checksum, current: String(repeating: "0", count: 64)))
                XCTAssertTrue("\($0)".contains("migration 3 (0003_gatehouse_audit) was edited after it was applied"), "\($0)")
            }
            // A database ahead of this catalog is refused too.
            XCTAssertThrowsError(try PostgresMigrator().pending(db, Array(catalog.migrations.dropLast()))) {
                guard case .unknown(let id, _)? = $0 as? MigrationError else { return XCTFail("\($0)") }
                XCTAssertEqual(id, catalog.migrations.count)
            }
            XCTAssertEqual(try snapshot(db), before)
        }
    }

    func testAFailingMigrationLeavesTheDatabaseAsItWas() throws {
        try TestPostgres.withFreshSchema { db, _ in
            let good = Migration(id: 1, name: "0001_good", sql: "CREATE TABLE gatehouse_good (id integer)", checksum: "a")
            let bad = Migration(id: 2, name: "0002_bad", sql: "CREATE TABLE gatehouse_half (id integer); SELECT no_such_function();", checksum: "b")
            XCTAssertThrowsError(try PostgresMigrator().migrate(db, [Migration(id: 1, name: "0001_bad", sql: bad.sql, checksum: "b")], now: now))
            XCTAssertEqual(try db.tableNames(), [], "the table of records is created in the first migration's transaction")
            XCTAssertThrowsError(try PostgresMigrator().migrate(db, [good, bad], now: now))
            XCTAssertEqual(try db.tableNames(), ["gatehouse_good", "gatehouse_migrations"])
            XCTAssertEqual(try PostgresMigrator().applied(db).map(\.name), ["0001_good"])
        }
    }

    func testTheAuditLogRefusesUpdateDeleteAndTruncate() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try catalog().migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            try db.execute("INSERT INTO gatehouse_audit (at, actor, action, prev_hash, hash) VALUES ($1, 'ops', 'store.init', '', 'h1')", [now])
            XCTAssertEqual(try db.scalar("SELECT id FROM gatehouse_audit").int64, 1, "ids are assigned as SQLite assigns rowids")
            try db.execute("""
                INSERT INTO gatehouse_gate_history (at, actor, action, provider, platform, from_state, to_state, text)
                VALUES ($1, 'ops', 'enable', 'apple', 'ios', 'ready', 'live', 'launch')
                """, [now])
            for statement in ["UPDATE gatehouse_audit SET actor = 'x'", "DELETE FROM gatehouse_audit", "TRUNCATE gatehouse_audit",
                              "UPDATE gatehouse_gate_history SET actor = 'x'", "DELETE FROM gatehouse_gate_history",
                              "TRUNCATE gatehouse_gate_history", "TRUNCATE gatehouse_policy_history"] {
                XCTAssertThrowsError(try db.execute(statement), statement) {
                    XCTAssertTrue(($0 as? PostgresError)?.message.hasSuffix("is append-only") == true, "\($0)")
                }
            }
            XCTAssertEqual(try db.scalar("SELECT count(*) FROM gatehouse_audit").int64, 1)
            // Every append-only table has the three triggers its SQLite twin has (and TRUNCATE's).
            let triggers = try db.rows("""
                SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE c.relnamespace = current_schema()::regnamespace AND NOT tgisinternal ORDER BY 1
                """).map { try $0.string("tgname") }
            XCTAssertEqual(triggers, ["audit", "gate_history", "policy_history"].flatMap { table in
                ["delete", "truncate", "update"].map { "gatehouse_\(table)_no_\($0)" }
            })
        }
    }

    /// An existing Better Auth 1.6 database (no `issuer`) with rows: only Gatehouse's tables are added.
    func testAnExistingBetterAuthDatabaseGetsOnlyGatehouseTablesAndKeepsEveryRow() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(PostgresAuthSchemaTests.betterAuth16 + """
                ;INSERT INTO "user" VALUES ('u1', 'Ada', 'ada@example.com', true, NULL, '2025-01-02T03:04:05.678Z', '2025-01-02T03:04:05.678Z');
                INSERT INTO account (id, "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES ('a1', '001', 'apple', 'u1', now(), now());
                INSERT INTO session (id, "expiresAt", token, "updatedAt", "userId") VALUES ('s1', now() + interval '1 day', 't1', now(), 'u1');
                """)
            let rows = {
                try ["\"user\"", "account", "session", "verification"].flatMap { table in
                    try db.rows("SELECT t::text AS row FROM \(table) t ORDER BY 1").map { $0[0].string ?? "" }
                }
            }
            let before = try rows()
            let betterAuthBefore = try columns(db) + indexes(db)
            let catalog = try catalog()
            try catalog.migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            XCTAssertEqual(try PostgresMigrator().applied(db).filter { !$0.ran }.map(\.name), ["0001_better_auth_core"])
            XCTAssertEqual(try rows(), before)
            XCTAssertEqual(try columns(db) + indexes(db), betterAuthBefore, "Better Auth's tables are not altered")
            XCTAssertTrue(try db.tableExists("users"), "the sync server's tables are created when absent")
            XCTAssertTrue(try db.tableExists("gatehouse_gate_history"))
        }
    }

    /// Renamed Better Auth tables (gatehouse.json's `tables`) count as Better Auth's: migration 1 is skipped.
    func testRenamedBetterAuthTablesAreRecognised() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(PostgresAuthSchemaTests.drizzleSnakeCase)
            let configuration = StoreConfiguration(tables: ["user": "custom_user", "session": "custom_session",
                                                            "account": "custom_account", "verification": "custom_verification"])
            try catalog().migrate(postgres: db, configuration: configuration, now: now)
            XCTAssertFalse(try db.tableExists("user"))
            XCTAssertEqual(try PostgresMigrator().applied(db).filter { !$0.ran }.map(\.name), ["0001_better_auth_core"])
        }
    }

    /// The sync server's own tables, when they exist, are left alone (migration 2 is recorded without running).
    func testExistingSyncServerTablesAreLeftAlone() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript("CREATE TABLE users (id bigserial PRIMARY KEY, sub text NOT NULL UNIQUE, display_name text, created_at text NOT NULL, extra text)")
            try catalog().migrate(postgres: db, configuration: StoreConfiguration(), now: now)
            XCTAssertEqual(try PostgresMigrator().applied(db).filter { !$0.ran }.map(\.name), ["0002_sync_server"])
            XCTAssertFalse(try db.tableExists("workspaces"))
        }
    }
}
