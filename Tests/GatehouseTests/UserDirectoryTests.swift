@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `users search` and `users show` on every database shape, and against hostile input.
final class UserDirectoryTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func store(fixture: String) throws -> Store {
        let path = scratch.path(fixture + "-\(UUID().uuidString).sqlite")
        try Fixtures.database(fixture, at: path)
        return try Store.initialize(path: path, actor: tester).0
    }

    func testQueryTrimmingMatchesFoundationsWhitespaceSet() {
        for text in ["", " ", "\t\t", " jonas ", "\u{00A0}ana\u{2003}", "\u{3000}名前\u{3000}", " a b ", "\n x \n", "x\u{200B}", "\t\u{202F}é\u{301} "] {
            XCTAssertEqual(UserQuery.trimmingHorizontalSpace(text), text.trimmingCharacters(in: .whitespaces), text.debugDescription)
        }
        // Every scalar Foundation counts as a space is trimmed, and nothing else.
        for value in 0...0x3000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar) + "x"
            XCTAssertEqual(UserQuery.trimmingHorizontalSpace(text), text.trimmingCharacters(in: .whitespaces), String(format: "U+%04X", value))
        }
    }

    /// A store answering many `show`s (the console's) remembers which sync tables exist for a few seconds; one
    /// dropped meanwhile is noticed on the next read, which answers without it instead of failing.
    func testShowNoticesASyncTableDroppedWhileItsPresenceIsRemembered() throws {
        let store = try store(fixture: "better-auth-1.5.sql")
        let directory = UserDirectory(store: store)
        XCTAssertEqual(try directory.show("u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").sync.missingTables, [])
        try store.db.execute("DROP TABLE subscriptions")
        XCTAssertEqual(try directory.show("u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").sync.missingTables, ["subscriptions"])
        // Not-found stays not-found (and is not asked twice for).
        XCTAssertThrowsError(try directory.show("u9NOBODYNOBODYNOBODYNOBODYNOBODY")) { error in
            XCTAssertTrue("\(error)".contains("no such user"), "\(error)")
        }
    }

    func testShowOnEachShapeDecodesDatesAndNeverReadsSecrets() throws {
        let now = Timestamp(iso8601: "2026-01-01T00:00:00Z")!
        // Better Auth 1.5: ISO text, no issuer.
        let ba15 = UserDirectory(store: try store(fixture: "better-auth-1.5.sql"))
        let ana = try ba15.show("ANA@example.com", now: now)
        XCTAssertEqual(ana.user.id.rawValue, "u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        XCTAssertEqual(ana.user.createdAt?.iso8601, "2025-01-02T03:04:05.678Z")
        XCTAssertEqual(ana.accounts.count, 1)
        XCTAssertNil(ana.accounts[0].issuer)
        XCTAssertTrue(ana.accounts[0].hasAccessToken)
        XCTAssertFalse(ana.accounts[0].hasRefreshToken)
        XCTAssertEqual(ana.accounts[0].scope, "openid email")
        XCTAssertEqual(ana.sessions.total, 1)
        XCTAssertEqual(ana.sessions.unexpired, 1)
        XCTAssertEqual(ana.sessions.latest.first?.ipAddress, "81.2.3.4")
        XCTAssertFalse(ana.sync.provisioned)
        XCTAssertEqual(ana.flags.map(\.code), ["unprovisioned"])
        XCTAssertTrue(ana.merges.available)
        XCTAssertEqual(ana.merges.records.count, 0)
        XCTAssertNil(ana.user.ban)
        let json = String(decoding: try JSONEncoder().encode(ana), as: UTF8.self)
        XCTAssertFalse(json.contains("secret-access-token"), json)
        XCTAssertFalse(json.contains("tok1"), json)
        let relay = try ba15.show("u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", now: now)
        XCTAssertEqual(relay.flags.map(\.code), ["private_relay_email", "unprovisioned"])

        // Drizzle, snake_case, epoch milliseconds, issuer.
        let ms = UserDirectory(store: try store(fixture: "drizzle-ms.sql"))
        let kenji = try ms.show("better_auth|d1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", now: now)
        XCTAssertEqual(kenji.user.createdAt?.iso8601, "2025-01-02T03:04:05.678Z")
        XCTAssertEqual(kenji.accounts.first?.issuer, Issuer.google)
        XCTAssertEqual(kenji.sessions.unexpired, 1)
        XCTAssertEqual(kenji.sessions.latest.first?.expiresAt?.iso8601, "2030-01-01T00:00:00.000Z")
        XCTAssertEqual(try ms.search("109876543210987654321").users.map(\.id.rawValue), ["d1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])

        // Drizzle, epoch seconds, credential account with a password.
        let seconds = UserDirectory(store: try store(fixture: "drizzle-seconds.sql"))
        let ingrid = try seconds.show("ingrid@example.com", now: now)
        XCTAssertEqual(ingrid.user.createdAt?.iso8601, "2025-01-02T03:04:05.000Z")
        XCTAssertEqual(ingrid.accounts.first?.hasPassword, true)
        XCTAssertEqual(ingrid.sessions.total, 0)
        XCTAssertTrue(ingrid.flags.contains(.emailNotVerified))
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(ingrid), as: UTF8.self).contains("c2FsdA"))
    }

    func testSearchKindsOnEachShape() throws {
        for fixture in ["better-auth-1.5.sql", "drizzle-ms.sql", "drizzle-seconds.sql"] {
            let directory = UserDirectory(store: try store(fixture: fixture))
            let all = try directory.search("@", by: .email).users
            XCTAssertFalse(all.isEmpty, fixture) // any part of the address: every address holds an @
            let any = try directory.search("a", by: .name).users
            XCTAssertFalse(any.isEmpty, fixture)
            let first = any[0]
            let prefix = String(first.email.prefix(3)).uppercased()
            XCTAssertTrue(try directory.search(prefix, by: .email).users.map(\.id).contains(first.id), fixture)
            XCTAssertEqual(try directory.search(first.id.rawValue).users.first?.id, first.id, fixture)
            XCTAssertEqual(try directory.search(first.id.syncSub.rawValue).users.first?.matchedBy, .sub, fixture)
        }
        let ba15 = UserDirectory(store: try store(fixture: "better-auth-1.5.sql"))
        XCTAssertEqual(try ba15.search("001234.abcdef.0001", by: .account).users.map(\.id.rawValue), ["u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"])
        XCTAssertEqual(try ba15.search("ana costa").users.count, 2)
        XCTAssertEqual(try ba15.search("  ÁNA   cOsta ", by: .name).users.count, 2)
    }

    func testEmailPrefixSearchUsesAnIndexRangeOnEveryShape() throws {
        for fixture in ["better-auth-1.5.sql", "drizzle-ms.sql", "drizzle-seconds.sql"] {
            let store = try store(fixture: fixture)
            let plan = try store.db.rows("EXPLAIN QUERY PLAN " + UserDirectory.emailPrefixSQL(store.schema, dialect: store.db.dialect, bounded: true), ["a", "b", 10])
                .compactMap { $0["detail"].string }.joined(separator: "\n")
            XCTAssertTrue(plan.contains("SEARCH"), "\(fixture): \(plan)")
            XCTAssertTrue(plan.contains("INDEX"), "\(fixture): \(plan)")
            XCTAssertFalse(plan.contains("SCAN"), "\(fixture): \(plan)")
            XCTAssertFalse(plan.contains("TEMP B-TREE"), "\(fixture): \(plan)")
        }
        let fresh = try Store.initialize(path: scratch.path("fresh.sqlite"), actor: tester).0
        let plan = try fresh.db.rows("EXPLAIN QUERY PLAN " + UserDirectory.emailPrefixSQL(fresh.schema, dialect: fresh.db.dialect, bounded: true), ["a", "b", 10])
            .compactMap { $0["detail"].string }.joined()
        XCTAssertTrue(plan.contains("SEARCH") && plan.contains("email>? AND email<?"), plan)
    }

    func testHostileInputIsDataNeverSQLOrWildcards() throws {
        let store = try store(fixture: "better-auth-1.5.sql")
        let directory = UserDirectory(store: store)
        for query in ["%", "_", "%@%", "a%", "an_", "' OR 1=1 --", "\"; DROP TABLE \"user\"; --", "*", "\\", "ana@example.com' --"] {
            for kind in [nil] + UserQueryKind.allCases.filter({ $0 != .sub }).map(Optional.some) {
                XCTAssertEqual(try directory.search(query, by: kind).users, [], "\(query) \(String(describing: kind))")
            }
        }
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM \"user\"").int64, 2)
        // A real match still works next to metacharacters: the prefix is literal.
        XCTAssertEqual(try directory.search("ana@").users.count, 1)
        XCTAssertThrowsError(try directory.search(String(repeating: "a", count: 513))) { error in
            XCTAssertEqual((error as? GatehouseError)?.code.rawValue, "invalid")
            XCTAssertTrue("\(error)".contains("at most 512"), "\(error)")
        }
        XCTAssertNoThrow(try directory.search(String(repeating: "a", count: 512)))
        XCTAssertThrowsError(try directory.search("ab\u{FFFD}")) { error in
            XCTAssertTrue("\(error)".contains("not valid UTF-8"), "\(error)")
        }
        XCTAssertThrowsError(try directory.search("a\u{0}b"))
        XCTAssertThrowsError(try directory.search("   "))
        XCTAssertThrowsError(try directory.search("better_auth|", by: .sub))
        XCTAssertThrowsError(try directory.search("nope", by: .sub))
        for reference in ["nosuch", "nobody@example.com", "better_auth|nosuch", "%", "better_auth|", "'; --"] {
            XCTAssertThrowsError(try directory.show(reference)) { error in
                XCTAssertEqual((error as? GatehouseError)?.code.rawValue, "not_found", reference)
                XCTAssertTrue("\(error)".contains("no such user"), "\(error)")
            }
        }
    }

    func testShowReadsSyncRowsBanStateAndMergeHistory() throws {
        let path = scratch.path("full.sqlite")
        let (store, _) = try Store.initialize(path: path, actor: tester)
        _ = try DemoSeeder(seed: 11, anchor: Timestamp(iso8601: "2026-01-01T00:00:00Z")!).seed(store, users: 200)
        let id = try XCTUnwrap(store.db.scalar("SELECT substr(u.sub, 13) FROM users u JOIN workspaces w ON w.owner_id = u.id JOIN subscriptions s ON s.user_id = u.id LIMIT 1").string)
        try store.db.execute("INSERT OR IGNORE INTO allow_list (sub, role, granted_at) VALUES (?, 'dev', '2026-01-01T00:00:00.000Z')", ["better_auth|" + id])
        try store.db.executeScript("""
            ALTER TABLE "user" ADD COLUMN "banned" integer; ALTER TABLE "user" ADD COLUMN "banReason" text; ALTER TABLE "user" ADD COLUMN "banExpires" date;
            ALTER TABLE "user" ADD COLUMN "role" text;
            """)
        try store.db.execute("UPDATE \"user\" SET banned = 1, banReason = 'spam', role = 'user' WHERE id = ?", [id])
        try recordMerge(store.db, source: "gone", target: id, undoData: #"{"accessToken":"secret-undo-token"}"#)
        let reopened = try Store.open(path: path)
        let detail = try UserDirectory(store: reopened).show(id)
        XCTAssertTrue(detail.sync.provisioned)
        XCTAssertFalse(detail.sync.workspaces.isEmpty)
        XCTAssertFalse(detail.sync.subscriptions.isEmpty)
        XCTAssertTrue(detail.sync.roles.map(\.role).contains("dev"))
        XCTAssertEqual(detail.user.ban, BanState(banned: true, reason: "spam", expires: nil))
        XCTAssertEqual(detail.user.role, "user")
        XCTAssertTrue(detail.merges.available)
        XCTAssertEqual(detail.merges.records.first?.fields["source_user_id"], "gone")
        XCTAssertNil(detail.merges.records.first?.fields["undo_data"])
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(detail), as: UTF8.self).contains("secret-undo-token"))
        let tokens = try reopened.db.rows("SELECT accessToken, idToken FROM account WHERE userId = ?", [id]).flatMap { [$0[0].string, $0[1].string] }.compactMap { $0 }
        let json = String(decoding: try JSONEncoder().encode(detail), as: UTF8.self)
        for token in tokens { XCTAssertFalse(json.contains(token)) }
    }

    func testNormalizationAndPrefixBounds() {
        var normalizer = NameNormalizer()
        XCTAssertEqual(normalizer.normalized("  José  O'Brien-García "), "jose obrien garcia")
        XCTAssertEqual(normalizer.normalized("ÁNA\tCOSTA"), "ana costa")
        XCTAssertEqual(normalizer.normalized("Jose\u{301} Wójcik"), "jose wojcik")
        XCTAssertEqual(normalizer.normalized("O’Brien"), "obrien")
        XCTAssertEqual(normalizer.key("..."), 0)
        XCTAssertEqual(normalizer.normalized("a%_b"), "a%_b")
        XCTAssertEqual(normalizer.key("Chloé Dubois"), normalizer.key("chloe  DUBOIS"))
        XCTAssertEqual(UserQuery.prefixUpperBound("abc"), "abd")
        XCTAssertEqual(UserQuery.prefixUpperBound("a\u{10FFFF}"), "b")
        XCTAssertEqual(UserQuery.prefixUpperBound("a\u{D7FF}"), "a\u{E000}")
        XCTAssertNil(UserQuery.prefixUpperBound(""))
        XCTAssertTrue(EmailAddress("x@PrivateRelay.AppleID.com").isPrivateRelay)
        XCTAssertTrue(EmailAddress("x@private.icloud.com").isPrivateRelay)
        XCTAssertFalse(EmailAddress("x@icloud.com").isPrivateRelay)
        XCTAssertEqual(EmailAddress("ana+news@gmail.com").mailbox, "ana")
        XCTAssertEqual(UserQuery.recognise("better_auth|abc"), [.sub])
        XCTAssertEqual(UserQuery.recognise("001234.0123456789abcdef0123456789abcdef.0001"), [.account])
        XCTAssertEqual(UserQuery.recognise("104857600000000000001"), [.account])
        XCTAssertEqual(UserQuery.recognise("ana"), [.email, .name])
    }

    func testInitCreatesTheMissingIndexesOnEveryShapeAndOnRequest() throws {
        let fresh = try Store.initialize(path: scratch.path("fresh.sqlite"), actor: tester).0
        XCTAssertEqual(try AccountIndexes.missing(fresh.db, schema: fresh.schema), [])
        XCTAssertNotNil(try fresh.db.row("SELECT 1 FROM sqlite_master WHERE name = 'gatehouse_account_accountId_providerId_idx'"))

        // A Drizzle database lacks three, both verification indexes and the refresh token prefix index; init adds them
        // under gatehouse_ names, in Drizzle's column names.
        let path = scratch.path("drizzle.sqlite")
        try Fixtures.database("drizzle-ms.sql", at: path)
        let (drizzle, report) = try Store.initialize(path: path, actor: tester)
        XCTAssertEqual(Set(report.indexesCreated), ["gatehouse_account_accountId_providerId_idx", "gatehouse_account_userId_idx", "gatehouse_session_userId_idx", "gatehouse_user_search",
                                                      "gatehouse_verification_identifier_tail_idx", "gatehouse_verification_value_idx",
                                                      "gatehouse_user_name_idx", "gatehouse_user_createdAt_idx", "gatehouse_account_refreshToken_prefix_idx"])
        XCTAssertEqual(try AccountIndexes.missing(drizzle.db, schema: drizzle.schema), [])
        let plan = try drizzle.db.rows("EXPLAIN QUERY PLAN SELECT * FROM `session` WHERE user_id = ?", ["x"]).compactMap { $0["detail"].string }.joined()
        XCTAssertTrue(plan.contains("gatehouse_session_userId_idx"), plan)

        // An index dropped later is put back on request, as an audited change.
        try drizzle.db.execute("DROP INDEX gatehouse_session_userId_idx")
        XCTAssertEqual(try AccountIndexes.missing(drizzle.db, schema: drizzle.schema).first?.columns, ["user_id"])
        XCTAssertEqual(try AccountIndexes.create(drizzle, actor: tester), ["gatehouse_session_userId_idx"])
        XCTAssertEqual(try drizzle.audit.entries(drizzle.db).first?.action, "accounts.index")
        XCTAssertEqual(try AccountIndexes.create(drizzle, actor: tester), [])
    }
}
