@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Name search on Postgres through `PostgresNameIndex`, against the throw-away cluster ops/test starts: the same
/// answers as the reference (every name normalized here, in the server's id order), through the index whether the
/// users are indexed or pending, while another connection writes the user table with plain SQL as Better Auth does.
final class PostgresNameIndexTests: XCTestCase {
    private var database: PostgresTestDatabase!
    private var uri: String { database.uri }

    override func setUpWithError() throws { database = try PostgresTestDatabase.make("gh_names") }

    override func tearDown() { database?.drop() }

    /// The users of `UserSearchIndexTests` whose names are text (Postgres's name column takes nothing else), added
    /// as Better Auth adds them: plain SQL.
    private func insertUsers(_ db: SQLDatabase, _ schema: AuthSchema, from first: Int = 0) throws {
        let user = schema.user
        for (index, name) in UserSearchIndexTests.textNames.enumerated() {
            try db.execute("""
                INSERT INTO \(user.sql) (\(user.col(.id)), \(user.col(.name)), \(user.col(.email)), \(user.col(.emailVerified)), \(user.col(.createdAt)), \(user.col(.updatedAt)))
                VALUES (?, ?, ?, false, now(), now())
                """, [String(format: "v%031d", first + index), name, "user\(first + index)@example.com"])
        }
    }

    /// The answer: `UserSearchIndexTests.reference` in the server's id order.
    private func reference(_ db: SQLDatabase, _ schema: AuthSchema, _ query: String, limit: Int) throws -> [String] {
        try UserSearchIndexTests.reference(db, schema, query, limit: limit, order: schema.user.col(.id))
    }

    private func assertSearchesMatchTheReference(_ store: Store, plan expected: NameSearch.Plan, file: StaticString = #filePath, line: UInt = #line) throws {
        for query in UserSearchIndexTests.queries {
            let trimmed = try UserQuery.validate(query)
            var normalizer = NameNormalizer()
            let empty = normalizer.normalized(trimmed).isEmpty
            for limit in [1, 3, 20, 1000] {
                let (ids, plan) = try NameSearch(db: store.db, schema: store.schema).ids(matching: trimmed, limit: limit)
                XCTAssertEqual(ids.map(\.rawValue), try reference(store.db, store.schema, trimmed, limit: limit),
                               "\(query.debugDescription) limit \(limit) via \(plan)", file: file, line: line)
                if !empty { XCTAssertEqual(plan, expected, query.debugDescription, file: file, line: line) }
            }
        }
    }

    func testInitBuildsItAndSearchesMatchTheScanIndexedOrPending() throws {
        let (store, report) = try Store.initialize(path: uri, actor: Actor("tester"))
        XCTAssertTrue(report.indexesCreated.contains(UserSearchIndex.table), "\(report.indexesCreated)")
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema), .init(state: .current, pending: 0, reason: nil))
        // Added after init: every one pending, read and compared here.
        try insertUsers(store.db, store.schema)
        let count = UserSearchIndexTests.textNames.count
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, count)
        try assertSearchesMatchTheReference(store, plan: .index)
        // Built (every user was pending): the server finds them.
        guard case .built = try UserSearchIndex.ensure(store, actor: Actor("tester")) else { return XCTFail("not built") }
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, 0)
        try assertSearchesMatchTheReference(store, plan: .index)
        // Better Auth's connection renames, deletes and adds with plain SQL: marked pending by the triggers.
        let other = try PostgresConnection(uri: PostgresURI(uri))
        let user = store.schema.user
        try other.execute("UPDATE \(user.sql) SET \(user.col(.name)) = 'Quixotic Renamed' WHERE \(user.col(.id)) = ?", [String(format: "v%031d", 0)])
        try other.execute("UPDATE \(user.sql) SET \(user.col(.email)) = 'same-name@example.com' WHERE \(user.col(.id)) = ?", [String(format: "v%031d", 1)])
        try other.execute("DELETE FROM \(user.sql) WHERE \(user.col(.id)) = ?", [String(format: "v%031d", 2)])
        try insertUsers(other, store.schema, from: 1000)
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, 2 + count, "an update that leaves the name alone marks nothing")
        try assertSearchesMatchTheReference(store, plan: .index)
        XCTAssertEqual(try NameSearch(db: store.db, schema: store.schema).ids(matching: "quixotic renamed", limit: 5).ids.map(\.rawValue),
                       [String(format: "v%031d", 0)])
        // Folded (few pending among many indexed would fold; here they are many, so it builds again): still exact.
        XCTAssertNotEqual(try UserSearchIndex.ensure(store, actor: Actor("tester")), .unchanged)
        try assertSearchesMatchTheReference(store, plan: .index)
        // Without the index the scan gives the same answers.
        try UserSearchIndex.drop(store.db, schema: store.schema)
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).state, .absent)
        try assertSearchesMatchTheReference(store, plan: .scan)
        // And Better Auth's writes go on without the triggers' function.
        try insertUsers(other, store.schema, from: 2000)
    }

    /// Where the database has pg_trgm, the keys get its GIN index: `accounts index` adds it to an index built before
    /// the extension came (and then has nothing left to do), the server can answer a LIKE from it, and the answers
    /// stay the scan's.
    func testPgTrgmGivesTheKeysATrigramIndexWithTheSameAnswers() throws {
        let (store, _) = try Store.initialize(path: uri, actor: Actor("tester"))
        try insertUsers(store.db, store.schema)
        guard case .built(let keyed) = try UserSearchIndex.ensure(store, actor: Actor("tester")) else { return XCTFail("not built") }
        func trigramIndex() throws -> Bool {
            try store.db.row("SELECT to_regclass(?) IS NOT NULL AS present", [PostgresNameIndex.trigramIndex])?.bool("present") == true
        }
        XCTAssertFalse(try trigramIndex(), "no pg_trgm yet: the server scans the keys")
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: Actor("tester")), .unchanged)

        let superuser = try PostgresConnection(uri: PostgresURI(uri.replacingOccurrences(of: "://gatehouse@", with: "://postgres@")))
        try superuser.executeScript("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        guard case .built(let users) = try UserSearchIndex.ensure(store, actor: Actor("tester")) else { return XCTFail("the trigram index was not added") }
        XCTAssertEqual(users, keyed, "the keys stand as built")
        XCTAssertTrue(try trigramIndex())
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: Actor("tester")), .unchanged, "nothing left to add")
        try assertSearchesMatchTheReference(store, plan: .index)
        // The index serves a contains-match on the keys (the planner may still scan a table this small on its own).
        try store.db.execute("SET enable_seqscan = off")
        let plan = try store.db.rows("EXPLAIN SELECT user_id FROM gatehouse_user_search_names WHERE key LIKE '%zeb%'").compactMap { $0[0].string }.joined(separator: "\n")
        try store.db.execute("RESET enable_seqscan")
        XCTAssertTrue(plan.contains("gatehouse_user_search_names_trgm"), plan)
        // A rebuild keeps it; dropping the index drops it too.
        guard case .built = try UserSearchIndex.ensure(store, actor: Actor("tester"), rebuild: true) else { return XCTFail("not rebuilt") }
        XCTAssertTrue(try trigramIndex())
        try assertSearchesMatchTheReference(store, plan: .index)
        try UserSearchIndex.drop(store.db, schema: store.schema)
        XCTAssertFalse(try trigramIndex())
    }

    func testAFewPendingUsersAreFoldedInAndAMissingTriggerMakesItStale() throws {
        let (store, _) = try Store.initialize(path: uri, actor: Actor("tester"))
        try insertUsers(store.db, store.schema)
        try UserSearchIndex.ensure(store, actor: Actor("tester"))
        let user = store.schema.user
        try store.db.execute("UPDATE \(user.sql) SET \(user.col(.name)) = 'Zebediah Folded' WHERE \(user.col(.id)) = ?", [String(format: "v%031d", 5)])
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: Actor("tester")), .folded(users: 1))
        XCTAssertEqual(try store.db.scalar("SELECT key FROM gatehouse_user_search_names WHERE user_id = ?", [String(format: "v%031d", 5)]).string,
                       "zebediah folded")
        try assertSearchesMatchTheReference(store, plan: .index)
        try store.db.execute("DROP TRIGGER \(SQL.quote(UserSearchIndex.updateTrigger)) ON \(user.sql)")
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).state, .stale)
        try assertSearchesMatchTheReference(store, plan: .scan)
        guard case .built = try UserSearchIndex.ensure(store, actor: Actor("tester")) else { return XCTFail("not rebuilt") }
        try assertSearchesMatchTheReference(store, plan: .index)
        // Each change is in the audit log.
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'accounts.index'").int64, 3)
    }

    func testUUIDIdsAndARoleThatMayNotAddTriggers() throws {
        // A Drizzle-style store with uuid ids: the index's tables take the id's own type.
        let db = try PostgresConnection(uri: PostgresURI(uri))
        try db.executeScript("""
            CREATE TABLE "user" (id uuid PRIMARY KEY, name text NOT NULL, email text NOT NULL UNIQUE, "emailVerified" boolean NOT NULL,
                                 image text, "createdAt" timestamptz NOT NULL, "updatedAt" timestamptz NOT NULL);
            CREATE TABLE account (id uuid PRIMARY KEY, "accountId" text NOT NULL, "providerId" text NOT NULL, "userId" uuid NOT NULL REFERENCES "user"(id),
                                  "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz,
                                  "refreshTokenExpiresAt" timestamptz, scope text, password text, "createdAt" timestamptz NOT NULL, "updatedAt" timestamptz NOT NULL);
            CREATE TABLE session (id uuid PRIMARY KEY, "expiresAt" timestamptz NOT NULL, token text NOT NULL UNIQUE, "createdAt" timestamptz NOT NULL,
                                  "updatedAt" timestamptz NOT NULL, "ipAddress" text, "userAgent" text, "userId" uuid NOT NULL REFERENCES "user"(id));
            CREATE TABLE verification (id uuid PRIMARY KEY, identifier text NOT NULL, value text NOT NULL, "expiresAt" timestamptz NOT NULL,
                                       "createdAt" timestamptz, "updatedAt" timestamptz);
            """)
        let (store, _) = try Store.initialize(path: uri, actor: Actor("tester"))
        XCTAssertEqual(try store.db.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'gatehouse_user_search_names'::regclass AND attname = 'user_id'").string, "uuid")
        for (index, name) in ["Ana Costa", "José García", "Zoë Quixotic", "Ana Quixotic"].enumerated() {
            try store.db.execute("""
                INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") VALUES (?, ?, ?, false, now(), now())
                """, [String(format: "00000000-0000-4000-8000-%012d", 9 - index), name, "u\(index)@example.com"])
        }
        try assertSearchesMatchTheReference(store, plan: .index)
        try UserSearchIndex.ensure(store, actor: Actor("tester"))
        try assertSearchesMatchTheReference(store, plan: .index)
        XCTAssertEqual(try NameSearch(db: store.db, schema: store.schema).ids(matching: "quixotic", limit: 5).ids.map(\.rawValue),
                       ["00000000-0000-4000-8000-000000000006", "00000000-0000-4000-8000-000000000007"])

        // Another role, which does not own the tables.
        let role = "gh_names_role_\(UInt32.random(in: .min ... .max))"
        let superuser = try PostgresConnection(uri: PostgresURI(uri.replacingOccurrences(of: "://gatehouse@", with: "://postgres@")))
        try superuser.executeScript("CREATE ROLE \(role) LOGIN")
        defer { try? superuser.executeScript("DROP OWNED BY \(role); DROP ROLE IF EXISTS \(role)") }
        let roleURI = uri.replacingOccurrences(of: "://gatehouse@", with: "://\(role)@")
        // Better Auth's own role, with rights on its user table only: its sign-ups, renames and deletions go on, and
        // are recorded (the triggers' function runs as Gatehouse's role).
        try db.executeScript(#"GRANT SELECT, INSERT, UPDATE, DELETE ON "user" TO \#(role)"#)
        let betterAuth = try PostgresConnection(uri: PostgresURI(roleURI))
        try betterAuth.execute("""
            INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") VALUES (?, 'Quixotic Signup', 'signup@example.com', false, now(), now())
            """, ["00000000-0000-4000-8000-000000000001"])
        try betterAuth.execute(#"UPDATE "user" SET name = 'Renamed Quixotic' WHERE id = ?"#, ["00000000-0000-4000-8000-000000000009"])
        try betterAuth.execute(#"DELETE FROM "user" WHERE id = ?"#, ["00000000-0000-4000-8000-000000000008"])
        XCTAssertThrowsError(try betterAuth.scalar("SELECT count(*) FROM gatehouse_user_search_pending"), "the role has no right on Gatehouse's tables")
        XCTAssertEqual(try store.db.rows("SELECT user_id::text AS id FROM gatehouse_user_search_pending ORDER BY 1").map { try $0.string("id") },
                       ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000008", "00000000-0000-4000-8000-000000000009"])
        try assertSearchesMatchTheReference(store, plan: .index)

        // With rights on every table, but not the owner: no index, and init does not fail.
        try db.executeScript("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role); GRANT CREATE ON SCHEMA public TO \(role)")
        try UserSearchIndex.drop(store.db, schema: store.schema)
        let limited = try PostgresConnection(uri: PostgresURI(roleURI))
        let schema = try AuthSchema.inspect(limited, configuration: StoreConfiguration()).get()
        XCTAssertEqual(try UserSearchIndex.status(limited, schema: schema).state, .unsupported)
        guard case .unsupported(let reason) = try UserSearchIndex.ensure(limited, schema: schema) else { return XCTFail("built without the right") }
        XCTAssertTrue(reason.contains("does not own the user table"), reason)
        XCTAssertEqual(try NameSearch(db: limited, schema: schema).ids(matching: "quixotic", limit: 5).plan, .scan)
    }
}
