import Foundation
import XCTest

/// `gatehouse users search` a page at a time, on every engine this run reaches (SQLite, Postgres, D1), each seeded
/// with the same deterministic demo data: paging through every result with no duplicate or gap in each sort, each
/// filter, email search by any part of the address, and the refusals (a bad cursor, sort or flag).
final class UserSearchPagingTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    static let seed = ["--users", "240", "--seed", "12", "--anchor", "2026-01-01T00:00:00Z", "--quiet"]

    struct Page {
        let users: [[String: Any]]
        let next: String?
    }

    func page(_ arguments: [String], store: TestStore, after: String? = nil) throws -> Page {
        let result = try cli.run(["users", "search"] + arguments + (after.map { ["--after", $0] } ?? []) + ["--json", "--store", store.location])
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
        XCTAssertTrue(object.keys.contains("nextCursor"), "nextCursor is always present (null on the last page)")
        return Page(users: object["users"] as? [[String: Any]] ?? [], next: object["nextCursor"] as? String)
    }

    /// Every user of a search, page by page; fails on a user seen twice.
    func all(_ arguments: [String], store: TestStore, pageSize: Int = 7) throws -> [[String: Any]] {
        var users: [[String: Any]] = []
        var after: String?
        var seen = Set<String>()
        for _ in 0..<500 {
            let found = try page(arguments + ["--limit", String(pageSize)], store: store, after: after)
            XCTAssertLessThanOrEqual(found.users.count, pageSize)
            for user in found.users {
                let id = try XCTUnwrap(user["id"] as? String)
                XCTAssertTrue(seen.insert(id).inserted, "\(arguments): \(id) on two pages (\(store.engine))")
                users.append(user)
            }
            guard let next = found.next else { return users }
            XCTAssertEqual(found.users.count, pageSize, "a page before the last is full")
            after = next
        }
        XCTFail("more than 500 pages")
        return users
    }

    func ids(_ users: [[String: Any]]) -> Set<String> { Set(users.compactMap { $0["id"] as? String }) }

    /// The truth, from the SQLite store's rows through the sqlite3 shell.
    func truth(_ sqlite: String, _ condition: String) throws -> Set<String> {
        Set(try sqlite3(sqlite, "SELECT id FROM \"user\" WHERE \(condition)").split(separator: "\n").map(String.init))
    }

    func testPagingSortsFiltersAndEmailPartsOnEveryEngine() throws {
        let scratch = try Scratch()
        let reference = try TestStore.make(.sqlite, in: scratch, name: "reference")
        XCTAssertEqual(try reference.seedDemo(Self.seed, cli: cli, in: scratch).status, 0)
        let relay = try truth(reference.location, "email LIKE '%@privaterelay.appleid.com'")
        XCTAssertGreaterThan(relay.count, 15, "the demo data has relay users to page through")
        let anaAt = try truth(reference.location, "instr(email, 'a@') > 0")
        let apple = try truth(reference.location, "id IN (SELECT userId FROM account WHERE providerId = 'apple')")
        let recent = try truth(reference.location, "createdAt >= '2025-07-01'")
        let tanaka = try truth(reference.location, "lower(name) LIKE '%tanaka%'")
        XCTAssertGreaterThan(tanaka.count, 3)

        for engine in TestStore.engines {
            let store = engine == .sqlite ? reference : try TestStore.make(engine, in: scratch, name: "paging")
            if engine != .sqlite { XCTAssertEqual(try store.seedDemo(Self.seed, cli: cli, in: scratch).status, 0, "\(engine)") }

            // Any part of the address: the domain's middle, the whole domain with its @, the end of the mailbox.
            for query in ["privaterelay", "@privaterelay.appleid.com", "PrivateRelay.AppleID"] {
                XCTAssertEqual(ids(try all([query, "--by", "email"], store: store)), relay, "\(engine) \(query)")
            }
            XCTAssertEqual(ids(try all(["a@", "--by", "email"], store: store, pageSize: 25)), anaAt, "\(engine)")
            for query in ["%", "_", "%@%", "a_b"] {
                XCTAssertEqual(try all([query, "--by", "email"], store: store).count, 0, "\(engine) \(query): wildcards are ordinary characters")
            }

            // By default an email search lists the addresses that start with the query first, then the ones holding it
            // further in, each part in email order; paging through them gives every match once.
            let byte = { (a: String, b: String) in Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }
            for query in ["ma", "a@", "privaterelay"] {
                let emails = try all([query, "--by", "email"], store: store, pageSize: 5).compactMap { $0["email"] as? String }
                let truthCount = try truth(reference.location, "instr(lower(email), '\(query)') > 0").count
                XCTAssertEqual(emails.count, truthCount, "\(engine) \(query)")
                let starting = emails.filter { $0.hasPrefix(query) }, further = emails.filter { !$0.hasPrefix(query) }
                XCTAssertEqual(emails, starting.sorted(by: byte) + further.sorted(by: byte), "\(engine) \(query): the start first")
                if query == "ma" { XCTAssertFalse(starting.isEmpty || further.isEmpty, "\(engine): both parts are paged through") }
            }

            // Every sort pages through the same users, in its order.
            for sort in ["email", "name", "created", "lastSignIn"] {
                let users = try all(["privaterelay", "--by", "email", "--sort", sort], store: store)
                XCTAssertEqual(ids(users), relay, "\(engine) --sort \(sort)")
                switch sort {
                case "email":
                    let emails = users.compactMap { $0["email"] as? String }
                    XCTAssertEqual(emails, emails.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, "\(engine)")
                case "name":
                    let names = users.compactMap { $0["name"] as? String }
                    XCTAssertEqual(names, names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, "\(engine)")
                case "created":
                    let created = users.compactMap { $0["createdAt"] as? String }
                    XCTAssertEqual(created, created.sorted(by: >), "\(engine): newest first")
                default: break
                }
            }

            // Names (through the name index, or the scan where an engine has none), and a query tried both ways.
            for sort in ["name", "created"] {
                XCTAssertEqual(ids(try all(["tanaka", "--by", "name", "--sort", sort], store: store, pageSize: 3)), tanaka, "\(engine) \(sort)")
            }
            XCTAssertTrue(ids(try all(["tanaka"], store: store, pageSize: 4)).isSuperset(of: tanaka), "\(engine): by email or by name")

            // Filters, alone and together.
            let relayApple = try all(["privaterelay", "--by", "email", "--provider", "apple"], store: store)
            XCTAssertEqual(ids(relayApple), relay.intersection(apple), "\(engine)")
            XCTAssertEqual(ids(try all(["@", "--by", "email", "--flag", "relay"], store: store, pageSize: 30)), relay, "\(engine)")
            XCTAssertEqual(ids(try all(["@", "--by", "email", "--created-after", "2025-07-01", "--sort", "created"], store: store, pageSize: 40)),
                           recent, "\(engine)")
            XCTAssertEqual(try all(["@", "--by", "email", "--flag", "deletionPending"], store: store).count, 0, "\(engine)")
            XCTAssertEqual(try all(["@", "--by", "email", "--flag", "googleDisabled"], store: store).count, 0, "\(engine)")
            let split = try all(["@", "--by", "email", "--flag", "splitIdentity", "--sort", "name"], store: store, pageSize: 50)
            XCTAssertFalse(split.isEmpty, "\(engine): demo names repeat across providers")
            for user in split.prefix(5) {
                let name = try XCTUnwrap(user["name"] as? String).replacingOccurrences(of: "'", with: "''")
                XCTAssertGreaterThan(Int(try sqlite3(reference.location, "SELECT count(*) FROM \"user\" WHERE name = '\(name)'")) ?? 0, 1)
            }

            // Refusals: a clear message and the usage (2) or invalid-input (1) exit status, never a crash.
            func refused(_ arguments: [String], status: Int32, _ message: String) throws {
                let result = try cli.run(["users", "search"] + arguments + ["--store", store.location])
                XCTAssertEqual(result.status, status, "\(engine) \(arguments): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(message), "\(engine) \(arguments): \(result.stderr)")
                XCTAssertEqual(result.stdout, "")
            }
            let emailCursor = try XCTUnwrap(try page(["privaterelay", "--by", "email", "--limit", "3"], store: store).next)
            try refused(["privaterelay", "--after", "not-a-cursor"], status: 1, "the cursor")
            try refused(["privaterelay", "--after", String(emailCursor.dropLast(4))], status: 1, "is not one this search gave")
            try refused(["privaterelay", "--sort", "created", "--after", emailCursor], status: 1, "was made for sort match")
            // A cursor of the right form whose key is of the wrong type for the order.
            let forged = Data(#"{"s":"created","i":"x","k":"2026'); DROP TABLE user; --"}"#.utf8).base64EncodedString()
            try refused(["privaterelay", "--sort", "created", "--after", forged], status: 1, "is not one this search gave")
            try refused(["privaterelay", "--sort", "newest"], status: 2, "--sort must be one of")
            try refused(["privaterelay", "--flag", "famous"], status: 2, "--flag must be one of")
            try refused(["privaterelay", "--provider", "a b"], status: 2, "is not a provider id")
            try refused(["privaterelay", "--created-after", "yesterday"], status: 2, "is not an ISO date")
        }
    }

    /// The human output's last line is the command for the next page, and running it shows that page.
    func testTheLastLineIsTheNextPagesCommand() throws {
        let scratch = try Scratch()
        let store = try TestStore.make(.sqlite, in: scratch)
        XCTAssertEqual(try store.seedDemo(Self.seed, cli: cli, in: scratch).status, 0)
        let first = try cli.run(["users", "search", "privaterelay", "--by", "email", "--limit", "4", "--sort", "created", "--store", store.location])
        XCTAssertEqual(first.status, 0, first.stderr)
        let last = try XCTUnwrap(first.stdout.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(last.hasPrefix("next page: gatehouse users search privaterelay --by email --limit 4 --sort created --after "), last)
        let words = last.dropFirst("next page: gatehouse ".count).split(separator: " ").map(String.init)
        let second = try cli.run(words)
        XCTAssertEqual(second.status, 0, second.stderr)
        let json = try page(["privaterelay", "--by", "email", "--limit", "4", "--sort", "created"], store: store,
                            after: try XCTUnwrap(words.firstIndex(of: "--after").map { words[$0 + 1] }))
        for user in json.users { XCTAssertTrue(second.stdout.contains(try XCTUnwrap(user["id"] as? String)), second.stdout) }
        XCTAssertFalse(first.stdout.contains(try XCTUnwrap(json.users.first?["id"] as? String)), "the second page starts after the first")

        let everything = try cli.run(["users", "search", "privaterelay", "--by", "email", "--limit", "1000", "--store", store.location])
        XCTAssertFalse(everything.stdout.contains("next page:"), "no next page after the last")
    }
}
