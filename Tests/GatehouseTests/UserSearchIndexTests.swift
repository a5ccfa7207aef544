@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Name search through `UserSearchIndex` answers exactly as the scan does, stays exact while Better Auth writes
/// the user table behind Gatehouse's back, and treats every query as literal text.
final class UserSearchIndexTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    /// Names with accents, combining marks, apostrophes, runs of spaces and punctuation, non-Latin scripts,
    /// FTS5 and LIKE syntax, and names that are not text at all.
    static let textNames = [
        "Ana Costa", "ÁNA  cOsta", "José O'Brien-García", "Jose\u{301} Garcia", "Zoë Quixotic-Smith", "ZOE QUIXOTIC SMITH",
        "François Dubois", "Łukasz Wójcik", "Ærøskøbing Ødegård", "Straße Müller", "İsmail Kaya", "Ελένη Παπαδοπούλου",
        "Дмитрий Иванов", "山田 太郎", "محمد حداد", "नीना पटेल", "Kim 김민준", "😀 Smiley Face", "Al", "Bo", "X",
        "50% Off_Sale", "under_score name", "Percent % Sign", "\"Quoted\" Name", "Star * Gazer", "NEAR(Ana Costa)",
        "Rock AND Roll", "Rock OR Roll NOT Jazz", "(Paren) Thesis", "col: value", "^caret start", "-minus first",
        "a+b@tag", "Plus+Name", "Back\\slash", "Semi;colon'; DROP TABLE user; --", "Ana", "ana costa", "ANA COSTA",
        "", "   ", "---", "O’Neil Typographic", "Mary-Jane  Watson",
        "x y z", "xyz", "Ana Costanza", "Costa Ana", "Anastasia Kowalski", "Jana Costa", "Susana Costas",
    ]
    static let names: [SQLValue] = textNames.map { .text($0) } + [.integer(12345), .blob([0x41, 0x6E, 0x61])]
    /// The users with a name key: text (or a number) that normalizes to something.
    static var named: Int { textNames.filter { var n = NameNormalizer(); return !n.normalized($0).isEmpty }.count + 1 }

    static let queries = [
        "a", "A", "n", "ä", "ø", "Å", "z", "q", "é", "1", "%", "_", "\"", "*", "(", ")", "-", "+", "@", "'",
        "an", "AN", "co", "ÁN", "al", "bo", "x ", "ss", "ß", "ø", "山田", "김", "😀", "%o", "_s", "\"\"", "**",
        "ana", "ANA", "Ána", "ana cos", "a co", "costa", "osta", "ost", "sta", "jose", "JOSÉ", "obrien", "o'brien", "o brien",
        "garcia", "garcía", "quixotic", "quix", "zoe", "zoë", "francois", "lukasz", "wojcik", "aeroskobing", "odegard", "strasse",
        "müller", "muller", "ismail", "ελένη", "ελενη", "дмитрий", "山田 太", "太郎", "محمد", "नीना", "김민준", "smiley", "😀 s",
        "50%", "% off", "0% o", "under_", "_score", "%%%", "___", "\"quoted\"", "\"quoted", "quoted\" n", "star *", "* gazer",
        "near", "NEAR(", "near(ana", "NEAR(Ana Costa)", "AND", "rock and", "OR roll", "NOT jazz", "(paren)", "paren)", "col:",
        "col: value", "^caret", "-minus", "a+b", "plus+", "back\\", "\\slash", "drop table", "; --", "12345", "234", "ana",
        "mary jane", "mary-jane", "mary.jane", "mary,jane", "y w", "x y", "xyz", "x y z", "y z", "ana costa", "costa ana",
        "nope-nothing", "zzzz",
        // One and two characters: none, rare, only in names shorter than a trigram, at a name's start or end.
        "zq", "qz", "ж", "жж", "ю", "k", "ki", "bo", "BO", "b", "al", "l", "x", "xy", "yz", "z ", " x", "ez", "ov", "ro", "оф",
        "太", "郎", "😀 ", "ю", "&", "\\", ";", "'", "’", "é", "ana costanza s", "user1+tag", "USER2+TAG@", "user3+", "+tag@example", String(repeating: "a", count: 200), "o’neil", "oneil", "typographic",
    ]

    /// Better Auth's way of adding a user: plain SQL through the schema map's columns and encodings.
    static func insertUser(_ db: SQLDatabase, _ schema: AuthSchema, id: String, name: SQLValue, email: String) throws {
        let user = schema.user
        let now = user.encoding(.createdAt).encode(Timestamp(iso8601: "2025-06-01T00:00:00Z")!)
        try db.execute("INSERT INTO \(user.sql) (\(user.col(.id)), \(user.col(.name)), \(user.col(.email)), \(user.col(.emailVerified)), \(user.col(.createdAt)), \(user.col(.updatedAt))) VALUES (?, ?, ?, 0, ?, ?)",
                       [id, name, email, now, now])
    }

    /// The answer the search must give, computed here without Gatehouse's search code: every user whose
    /// normalized name contains the normalized query, in rowid order (or `order`), the first `limit`.
    static func reference(_ db: SQLDatabase, _ schema: AuthSchema, _ query: String, limit: Int, order: String = "rowid") throws -> [String] {
        var normalizer = NameNormalizer()
        let needle = normalizer.normalized(query)
        guard !needle.isEmpty else { return [] }
        let user = schema.user
        return Array(try db.rows("SELECT \(user.col(.id)), \(user.col(.name)) FROM \(user.sql) ORDER BY \(order)").compactMap { row -> String? in
            guard let id = row[0].string, let name = row[1].string else { return nil }
            return normalizer.normalized(name).contains(needle) ? id : nil
        }.prefix(limit))
    }

    func fixtureStore(_ fixture: String? = nil, config: String? = nil) throws -> Store {
        let path = scratch.path("search-\(UUID().uuidString).sqlite")
        if let fixture { try Fixtures.database(fixture, at: path) }
        let configPath = config.map { Fixtures.directory.appendingPathComponent($0).path }
        let store = try Store.initialize(path: path, configurationPath: configPath, actor: tester).0
        for (index, name) in Self.names.enumerated() {
            try Self.insertUser(store.db, store.schema, id: String(format: "v%031d", index), name: name, email: "user\(index)+tag@Example.com".lowercased())
        }
        return store
    }

    func assertSearchesMatchTheReference(_ store: Store, expectIndex: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        var indexed = 0
        for query in Self.queries {
            let trimmed = try UserQuery.validate(query)
            // probeKeys 2: short needles past the first two keys go through the trigram list.
            for (limit, probe) in [(1, 2), (3, 2), (20, 2), (1000, 2), (3, 10_000), (1000, 10_000)] {
                let search = NameSearch(db: store.db, schema: store.schema, probeKeys: probe)
                let (ids, plan) = try search.ids(matching: trimmed, limit: limit)
                XCTAssertEqual(ids.map(\.rawValue), try Self.reference(store.db, store.schema, trimmed, limit: limit),
                               "\(query.debugDescription) limit \(limit) via \(plan)", file: file, line: line)
                if plan != .scan { indexed += 1 }
                var normalizer = NameNormalizer()
                let characters = normalizer.normalized(trimmed).unicodeScalars.count
                if expectIndex && characters > 0 {
                    XCTAssertEqual(plan, characters < UserSearchIndex.minimumNeedle ? .keys : .index, query.debugDescription, file: file, line: line)
                }
            }
            // The whole search (email prefix first, then names) is the same through the directory.
            let found = try UserDirectory(store: store).search(query).users.map(\.id.rawValue)
            XCTAssertEqual(Set(found).count, found.count, query, file: file, line: line)
        }
        if expectIndex { XCTAssertGreaterThan(indexed, 400, "every query with a normalized needle goes through the index", file: file, line: line) }
        else { XCTAssertEqual(indexed, 0, file: file, line: line) }
    }

    func testIndexedSearchEqualsTheScanOnAVariedFixture() throws {
        let store = try fixtureStore()
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema), .init(state: .current, pending: Self.names.count, reason: nil))
        // Every user still pending: the index holds none of them, the pending list answers.
        try assertSearchesMatchTheReference(store, expectIndex: true)
        XCTAssertEqual(try UserSearchIndex.ensure(store.db, schema: store.schema), .built(users: Self.named))
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, 0)
        try assertSearchesMatchTheReference(store, expectIndex: true)
        // Emails with + match by prefix, case-insensitively; a name match follows the email matches.
        XCTAssertEqual(try UserDirectory(store: store).search("USER2+TAG@").users.map(\.email), ["user2+tag@example.com"])
        let mixed = try UserDirectory(store: store).search("ana", limit: 50).users
        XCTAssertEqual(mixed.filter { $0.matchedBy == .name }.count, try Self.reference(store.db, store.schema, "ana", limit: 50).count)
        // Without the index, the scan gives the same answers.
        let before = try Self.queries.map { try UserDirectory(store: store).search($0, limit: 7).users.map(\.id) }
        try UserSearchIndex.drop(store.db, schema: store.schema)
        try assertSearchesMatchTheReference(store, expectIndex: false)
        XCTAssertEqual(try Self.queries.map { try UserDirectory(store: store).search($0, limit: 7).users.map(\.id) }, before)
    }

    func testEveryShapeAndRenamedTables() throws {
        for (fixture, config) in [("better-auth-1.5.sql", nil), ("drizzle-ms.sql", nil), ("drizzle-seconds.sql", nil), ("renamed-tables.sql", "renamed-tables.json")] {
            let store = try fixtureStore(fixture, config: config)
            XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).state, .current, fixture)
            let trigger = try store.db.scalar("SELECT tbl_name FROM sqlite_master WHERE name = 'gatehouse_user_search_insert'").string
            XCTAssertEqual(trigger, store.schema.user.name, fixture)
            try assertSearchesMatchTheReference(store, expectIndex: true)
            try UserSearchIndex.ensure(store.db, schema: store.schema)
            try assertSearchesMatchTheReference(store, expectIndex: true)
        }
    }

    func testTriggersKeepItExactWhileAnotherConnectionWritesPlainSQL() throws {
        let store = try fixtureStore()
        try UserSearchIndex.ensure(store.db, schema: store.schema)
        // Better Auth's process: its own connection, plain SQL, no Gatehouse code.
        let other = try SQLiteDatabase(path: store.path)
        let user = store.schema.user
        func run(_ sql: String, _ arguments: [SQLBindable] = []) throws { try other.execute(sql, arguments) }
        try Self.insertUser(other, store.schema, id: "new1", name: .text("Quentin Zyxwv"), email: "qz@example.com")
        try run("UPDATE \(user.sql) SET name = 'Ana Renamed Zyxwv' WHERE id = ?", [String(format: "v%031d", 0)])
        try run("UPDATE \(user.sql) SET name = 'Nobody Anymore' WHERE id = ?", [String(format: "v%031d", 4)]) // was Zoë Quixotic-Smith
        try run("DELETE FROM \(user.sql) WHERE id = ?", [String(format: "v%031d", 5)]) // ZOE QUIXOTIC SMITH
        try run("UPDATE \(user.sql) SET id = 'moved1' WHERE id = ?", [String(format: "v%031d", 6)]) // François Dubois
        // Conflict policies of the outer statement must never turn the trigger's bookkeeping into a failure.
        try run("INSERT OR REPLACE INTO \(user.sql) (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('new1', 'Quentin Replaced', 'qz@example.com', 0, '2025-01-01', '2025-01-01')")
        try run("INSERT INTO \(user.sql) (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('new2', 'Upsert Zyxwv', 'up@example.com', 0, '2025-01-01', '2025-01-01') ON CONFLICT (id) DO UPDATE SET name = excluded.name")
        try run("INSERT INTO \(user.sql) (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('new2', 'Upsert Again', 'up@example.com', 0, '2025-01-01', '2025-01-01') ON CONFLICT (id) DO UPDATE SET name = excluded.name")
        try run("DELETE FROM \(user.sql) WHERE id = 'new2'")
        try run("INSERT OR ABORT INTO \(user.sql) (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('new2', 'Back Again Zyxwv', 'up@example.com', 0, '2025-01-01', '2025-01-01')")
        try run("UPDATE \(user.sql) SET emailVerified = 1") // no name change: nothing pending for it

        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, 7)
        let directory = UserDirectory(store: store)
        func names(_ query: String) throws -> [String] { try directory.search(query, by: .name).users.map(\.name) }
        XCTAssertEqual(try names("zyxwv"), ["Ana Renamed Zyxwv", "Back Again Zyxwv"])
        XCTAssertEqual(try names("quixotic"), [])
        XCTAssertEqual(try names("quentin"), ["Quentin Replaced"])
        XCTAssertEqual(try directory.search("francois", by: .name).users.map(\.id.rawValue), ["moved1"])
        try assertSearchesMatchTheReference(store, expectIndex: true)
        // Folded in, the answers are the same and nothing is pending.
        XCTAssertEqual(try UserSearchIndex.ensure(store.db, schema: store.schema), .folded(users: 7))
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).pending, 0)
        XCTAssertEqual(try names("zyxwv"), ["Ana Renamed Zyxwv", "Back Again Zyxwv"])
        XCTAssertEqual(try directory.search("francois", by: .name).users.map(\.id.rawValue), ["moved1"])
        try assertSearchesMatchTheReference(store, expectIndex: true)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_user_search_names WHERE user_id LIKE 'v%' AND user_id IN ('\(String(format: "v%031d", 5))')").int64, 0)
    }

    func testAStoreMadeBeforeTheIndexGetsItFromInitAndAccountsIndex() throws {
        let store = try fixtureStore()
        try UserSearchIndex.drop(store.db, schema: store.schema)
        XCTAssertEqual(try UserSearchIndex.status(store.db, schema: store.schema).state, .absent)
        XCTAssertEqual(HealthRunner(providers: [UserSearchHealthCheck()]).run(store, HealthContext(now: .now())).checks.first?.status, .warning)
        XCTAssertEqual(try NameSearch(db: store.db, schema: store.schema).ids(matching: "quixotic", limit: 5).plan, .scan)
        // init on the existing store builds it.
        let (again, report) = try Store.initialize(path: store.path, actor: tester)
        XCTAssertEqual(report.indexesCreated, [UserSearchIndex.table])
        XCTAssertEqual(try UserSearchIndex.status(again.db, schema: again.schema).state, .current)
        XCTAssertEqual(try NameSearch(db: again.db, schema: again.schema).ids(matching: "quixotic", limit: 5).plan, .index)
        XCTAssertEqual(HealthRunner(providers: [UserSearchHealthCheck()]).run(again, HealthContext(now: .now())).checks.first?.status, .ok)
        // accounts index builds it as an audited change, and then has nothing to do.
        try UserSearchIndex.drop(again.db, schema: again.schema)
        XCTAssertEqual(try UserSearchIndex.ensure(again, actor: tester), .built(users: Self.named))
        let entry = try again.audit.entries(again.db).first
        XCTAssertEqual(entry?.action, "accounts.index")
        XCTAssertEqual(try UserSearchIndex.ensure(again, actor: tester), .unchanged)
        XCTAssertEqual(try UserSearchIndex.ensure(again, actor: tester, rebuild: true), .built(users: Self.named))
    }

    func testAMissingTriggerMakesItStaleUntilRebuilt() throws {
        let store = try fixtureStore()
        try UserSearchIndex.ensure(store.db, schema: store.schema)
        try store.db.execute("DROP TRIGGER gatehouse_user_search_insert")
        // An insert now goes unrecorded: the index cannot be trusted, and searches scan.
        try Self.insertUser(store.db, store.schema, id: "unseen", name: .text("Unseen Qwertz"), email: "unseen@example.com")
        let status = try UserSearchIndex.status(store.db, schema: store.schema)
        XCTAssertEqual(status.state, .stale)
        XCTAssertTrue(status.reason?.contains("gatehouse_user_search_insert") ?? false, "\(status)")
        let found = try NameSearch(db: store.db, schema: store.schema).ids(matching: "qwertz", limit: 5)
        XCTAssertEqual(found.ids.map(\.rawValue), ["unseen"])
        XCTAssertEqual(found.plan, .scan)
        let health = HealthRunner(providers: [UserSearchHealthCheck()]).run(store, HealthContext(now: .now())).checks[0]
        XCTAssertEqual(health.status, .warning)
        XCTAssertTrue(health.summary.contains("out of date"), health.summary)
        XCTAssertEqual(try UserSearchIndex.ensure(store.db, schema: store.schema), .built(users: Self.named + 1))
        XCTAssertEqual(try NameSearch(db: store.db, schema: store.schema).ids(matching: "qwertz", limit: 5).plan, .index)
    }

    func testAReadOnlyConnectionSearchesWithAndWithoutTheIndex() throws {
        let store = try fixtureStore()
        try UserSearchIndex.ensure(store.db, schema: store.schema)
        try Self.insertUser(store.db, store.schema, id: "late", name: .text("Late Pending Yodel"), email: "late@example.com")
        for immutable in [false, true] {
            if immutable { _ = try store.db.scalar("PRAGMA wal_checkpoint(TRUNCATE)") }
            var options = SQLiteDatabase.Options(readOnly: true)
            options.immutable = immutable
            let reader = Store(location: StoreLocation(SQLiteStoreEngine(path: store.path)), db: try SQLiteDatabase(path: store.path, options: options), schema: store.schema, configuration: store.configuration)
            let search = NameSearch(db: reader.db, schema: reader.schema)
            XCTAssertEqual(try search.ids(matching: "yodel", limit: 5).ids.map(\.rawValue), ["late"])
            XCTAssertEqual(try search.ids(matching: "yodel", limit: 5).plan, .index)
            try assertSearchesMatchTheReference(reader, expectIndex: true)
            XCTAssertEqual(try UserSearchIndex.status(reader.db, schema: reader.schema).state, .current)
        }
        try UserSearchIndex.drop(store.db, schema: store.schema)
        _ = try store.db.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        let reader = Store(location: StoreLocation(SQLiteStoreEngine(path: store.path)), db: try SQLiteDatabase(path: store.path, options: .init(readOnly: true)), schema: store.schema, configuration: store.configuration)
        XCTAssertEqual(try UserSearchIndex.status(reader.db, schema: reader.schema).state, .absent)
        try assertSearchesMatchTheReference(reader, expectIndex: false)
    }

    func testQueriesAreLiteralTextNeverFTSSyntax() throws {
        let store = try fixtureStore()
        try UserSearchIndex.ensure(store.db, schema: store.schema)
        let search = NameSearch(db: store.db, schema: store.schema)
        XCTAssertEqual(NameSearch.phrase(Array("a\"b".utf8)), "\"a\"\"b\"")
        func names(_ query: String) throws -> [String] {
            try search.ids(matching: query, limit: 50).ids.compactMap { id in
                try store.db.scalar("SELECT name FROM \"user\" WHERE id = ?", [id.rawValue]).string
            }
        }
        XCTAssertEqual(try names("NEAR(Ana Costa)"), ["NEAR(Ana Costa)"])
        XCTAssertEqual(try names("\"quoted\""), ["\"Quoted\" Name"])
        XCTAssertEqual(try names("star *"), ["Star * Gazer"])
        XCTAssertEqual(try names("rock and"), ["Rock AND Roll"])
        XCTAssertEqual(try names("50%"), ["50% Off_Sale"])
        XCTAssertEqual(try names("under_"), ["under_score name"])
        XCTAssertEqual(try names("col: v"), ["col: value"])
        XCTAssertEqual(try names("^caret"), ["^caret start"])
        for query in ["\"", "\"\"\"", "* OR *", "a\" OR \"b", "NEAR(\"a\" \"b\", 2)", "{key}: ana", "key:ana", "ana*", "\"ana\" AND", "(((", ")))", "- -", "+ana"] {
            XCTAssertEqual(try search.ids(matching: query, limit: 20).ids.map(\.rawValue), try Self.reference(store.db, store.schema, query, limit: 20), query)
        }
        // Oversized and control-character input is refused before any query runs; the largest accepted is served.
        let directory = UserDirectory(store: store)
        XCTAssertThrowsError(try directory.search(String(repeating: "ab", count: 257), by: .name)) { error in
            XCTAssertEqual((error as? GatehouseError)?.code, .invalid)
        }
        XCTAssertThrowsError(try directory.search("ana\u{1B}[2J", by: .name))
        XCTAssertEqual(try directory.search(String(repeating: "é", count: 256), by: .name).users, [])
        XCTAssertEqual(try search.ids(matching: String(repeating: "\"", count: 512), limit: 20).ids, [])
    }

    /// Needles of one or two characters go through the trigram list (names of three characters or more) and the
    /// short keys' index (shorter names), with pending users merged in: the same answers as the scan, whether
    /// nothing, a few, or only short names match, and when a needle is in too many trigrams (the keys' scan).
    func testShortNeedlesThroughTheTrigramListEqualTheScan() throws {
        let store = try fixtureStore()
        let db = store.db
        try db.write {
            for index in 0..<300 {
                try Self.insertUser(db, store.schema, id: "short\(index)", name: .text(index % 3 == 0 ? "Q\(index % 10)" : "Wx Name \(index)"), email: "short\(index)@example.com")
            }
            // Names whose trigrams put one letter in over `maxTerms` terms.
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
            for (index, pair) in (0..<(NameSearch.maxTerms + 50)).map({ ($0, "\(letters[$0 % 36])\(letters[($0 / 36) % 36])") }) {
                try Self.insertUser(db, store.schema, id: "many\(index)", name: .text("\(pair)j\(pair)"), email: "many\(index)@example.com")
            }
        }
        try UserSearchIndex.ensure(db, schema: store.schema)
        let terms = try db.scalar("SELECT count(*) FROM gatehouse_user_search_terms WHERE instr(term, 'j') > 0").int64 ?? 0
        XCTAssertGreaterThan(terms, Int64(NameSearch.maxTerms))
        // Pending users: a new short name, a renamed one, a deleted one, a new long one.
        try Self.insertUser(db, store.schema, id: "pend1", name: .text("Zq"), email: "pend1@example.com")
        try db.execute("UPDATE \"user\" SET name = 'Ж' WHERE id = 'short3'")
        try db.execute("DELETE FROM \"user\" WHERE id = 'short6'")
        try Self.insertUser(db, store.schema, id: "pend2", name: .text("Another Жuk"), email: "pend2@example.com")
        var search = NameSearch(db: db, schema: store.schema)
        func check(_ label: String) throws {
            for query in ["zq", "qz", "ж", "q", "q3", "3", "wx", "x ", " n", "j", "jj", "ja", "a", "e", " 2", "9", "ю", "uk", "ук"] {
                for (limit, probe) in [(1, 1), (2, 1), (5, 1), (20, 1), (1000, 1), (5, 3), (1000, 3), (5, 10_000), (1000, 10_000)] {
                    search.probeKeys = probe
                    let found = try search.ids(matching: query, limit: limit)
                    XCTAssertEqual(found.plan, .keys, "\(label) \(query)")
                    XCTAssertEqual(found.ids.map(\.rawValue), try Self.reference(db, store.schema, query, limit: limit), "\(label) \(query) limit \(limit)")
                }
            }
        }
        try check("pending")
        XCTAssertEqual(try search.ids(matching: "zq", limit: 5).ids.map(\.rawValue), ["pend1"])
        XCTAssertEqual(try search.ids(matching: "ж", limit: 5).ids.map(\.rawValue), ["short3", "pend2"])
        // Folded: the fold adds the new trigrams to the list.
        XCTAssertEqual(try UserSearchIndex.ensure(db, schema: store.schema), .folded(users: 4))
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM gatehouse_user_search_terms WHERE term = 'r ж'").int64, 1)
        try check("folded")
        XCTAssertEqual(try search.ids(matching: "ж", limit: 5).ids.map(\.rawValue), ["short3", "pend2"])
        try assertSearchesMatchTheReference(store, expectIndex: true)
        // An index built before the trigram list still answers (by the keys' scan); `accounts index` builds it again.
        try db.execute("DROP TABLE gatehouse_user_search_terms")
        XCTAssertEqual(try UserSearchIndex.status(db, schema: store.schema).state, .current)
        try check("no trigram list")
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: tester), .built(users: try db.scalar("SELECT count(*) FROM gatehouse_user_search_names").int64.map(Int.init) ?? -1))
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: tester), .unchanged)
        try check("rebuilt")
    }

    func testManyMatchesComeFirstInRowidOrderThroughTheIndex() throws {
        let store = try fixtureStore()
        let db = store.db
        try db.write {
            for index in 0..<2_500 {
                try Self.insertUser(db, store.schema, id: "bulk\(index)", name: .text("Common Name \(index)"), email: "bulk\(index)@example.com")
            }
        }
        try UserSearchIndex.ensure(db, schema: store.schema)
        // Renamed and new users (pending) interleave with the indexed ones by rowid.
        try db.execute("UPDATE \"user\" SET name = 'Common Renamed' WHERE id = 'bulk3'")
        try db.execute("DELETE FROM \"user\" WHERE id = 'bulk1'")
        try Self.insertUser(db, store.schema, id: "later", name: .text("Common Later"), email: "later@example.com")
        let search = NameSearch(db: db, schema: store.schema)
        for (query, limit) in [("common", 20), ("common", 1000), ("name 249", 20), ("common renamed", 5), ("mmon la", 3)] {
            let found = try search.ids(matching: query, limit: limit)
            XCTAssertEqual(found.plan, .index, query)
            XCTAssertEqual(found.ids.map(\.rawValue), try Self.reference(db, store.schema, query, limit: limit), query)
        }
    }

    func testChangedRowidsMakeItStaleUntilRebuilt() throws {
        let store = try fixtureStore()
        let db = store.db
        try UserSearchIndex.ensure(db, schema: store.schema)
        // What a dump and restore does to rowids, without any trigger firing.
        try db.execute("DELETE FROM \"user\" WHERE id = ?", [String(format: "v%031d", 2)])
        try db.execute("UPDATE \"user\" SET rowid = rowid - 1 WHERE rowid > (SELECT rowid FROM \"user\" WHERE id = ?)", [String(format: "v%031d", 1)])
        let status = try UserSearchIndex.status(db, schema: store.schema)
        XCTAssertEqual(status.state, .stale)
        XCTAssertTrue(status.reason?.contains("rowids changed") ?? false, "\(status)")
        try assertSearchesMatchTheReference(store, expectIndex: false)
        XCTAssertEqual(try UserSearchIndex.ensure(db, schema: store.schema), .built(users: Self.named - 1))
        try assertSearchesMatchTheReference(store, expectIndex: true)
    }

    func testAUserTableWithoutRowidKeepsTheScan() throws {
        let path = scratch.path("rowless.sqlite")
        let script = try Fixtures.sql("better-auth-1.5.sql").replacingOccurrences(of: "\"updatedAt\" date not null);\ncreate table \"session\"",
                                                                                 with: "\"updatedAt\" date not null) WITHOUT ROWID;\ncreate table \"session\"")
        XCTAssertTrue(script.contains("WITHOUT ROWID"))
        try SQLiteDatabase(path: path, options: .init(create: true)).executeScript(script)
        let (store, report) = try Store.initialize(path: path, actor: tester)
        XCTAssertFalse(report.indexesCreated.contains(UserSearchIndex.table))
        let status = try UserSearchIndex.status(store.db, schema: store.schema)
        XCTAssertEqual(status.state, .unsupported)
        XCTAssertEqual(try UserSearchIndex.ensure(store, actor: tester), .unsupported(status.reason ?? ""))
        XCTAssertEqual(try UserDirectory(store: store).search("ana costa").users.count, 2)
        XCTAssertEqual(try NameSearch(db: store.db, schema: store.schema).ids(matching: "costa", limit: 5).plan, .scan)
        let health = HealthRunner(providers: [UserSearchHealthCheck()]).run(store, HealthContext(now: .now())).checks[0]
        XCTAssertEqual(health.status, .ok)
        XCTAssertTrue(health.summary.contains("WITHOUT ROWID"), health.summary)
    }
}
