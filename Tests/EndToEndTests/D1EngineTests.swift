import Foundation
import XCTest

/// Every job on a D1 database, through the binary, against the local D1 REST API server ops/test starts
/// (Tests/Fixtures/d1_server.py: D1's documented rules over a real SQLite file, faults on request). A database is
/// filled by copying a SQLite store seeded with the demo data into the file behind it, as an operator's Better Auth
/// database would be there before Gatehouse.
final class D1EngineTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)

    func run(_ arguments: [String], store: String, environment: [String: String] = [:]) throws -> CLI.Result {
        var cli = self.cli
        for (key, value) in environment { cli.environment[key] = value }
        return try cli.run(arguments + ["--store", store])
    }

    /// A seeded SQLite store and a D1 database holding the same rows (and the same master key).
    func seededPair(_ scratch: Scratch, users: Int = 150) throws -> (sqlite: String, d1: TestStore) {
        let sqlite = scratch.path("seed.sqlite")
        XCTAssertEqual(try run(["init"], store: sqlite).status, 0)
        let seeded = try run(["demo", "seed", "--users", String(users)], store: sqlite)
        XCTAssertEqual(seeded.status, 0, seeded.all)
        return (sqlite, try d1Copy(of: sqlite, scratch))
    }

    /// A new D1 database holding the rows of the SQLite store `sqlite`, and its master key.
    func d1Copy(of sqlite: String, _ scratch: Scratch) throws -> TestStore {
        let d1 = try TestStore.make(.d1, in: scratch)
        let file = try XCTUnwrap(d1.d1File)
        _ = try sqlite3(sqlite, ".backup '\(file)'")
        _ = try sqlite3(file, "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;")
        let account = try XCTUnwrap(d1.location.split(separator: "/").dropFirst().first), database = try XCTUnwrap(d1.location.split(separator: "/").last)
        let keys = TestStore.environment["GATEHOUSE_KEY_DIR"]!
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        let key = keys + "/d1_\(account)_\(database).key"
        try? FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: sqlite + ".key", toPath: key)
        return d1
    }

    /// What a command printed with the store's name (and the SQLite path the copied rows name) and the times it
    /// stamps as it runs (`checkedAt`) put in common form.
    func normalized(_ text: String, _ stores: String...) -> String {
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        return stores.reduce(text) { $0.replacingOccurrences(of: $1, with: "STORE") }
            .replacingOccurrences(of: #""checkedAt" : ""# + today + #"T\d\d:\d\d:\d\d\.\d{3}Z""#, with: #""checkedAt" : "NOW""#, options: .regularExpression)
    }

    /// The ids of the best split-identity pair `users duplicates` finds in `store`: the earlier user, the later one.
    func splitPair(_ store: String) throws -> (earlier: String, later: String) {
        let candidates = try json(try run(["users", "duplicates", "--json"], store: store))["candidates"] as? [[String: Any]]
        let pair = try XCTUnwrap(candidates?.first)
        return (try XCTUnwrap((pair["earlier"] as? [String: Any])?["id"] as? String), try XCTUnwrap((pair["later"] as? [String: Any])?["id"] as? String))
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
    }

    func testEveryReadJobAnswersOnD1AsOnTheSameRowsInSQLite() throws {
        let scratch = try Scratch()
        let (sqlite, d1) = try seededPair(scratch)
        let listed = try json(try run(["users", "search", "a", "--json"], store: sqlite))
        let first = try XCTUnwrap((listed["users"] as? [[String: Any]])?.first)
        let id = try XCTUnwrap(first["id"] as? String), email = try XCTUnwrap(first["email"] as? String)
        let commands: [[String]] = [
            ["status", "--json", "--exact"], ["audit", "list", "--json"], ["audit", "verify"],
            ["users", "search", "ana"], ["users", "search", "a", "--limit", "7"], ["users", "search", String(email.prefix(5))],
            ["users", "show", id], ["users", "show", email, "--json"], ["users", "show", "no-such-user"],
            ["users", "duplicates", "--json"], ["accounts", "check", "--json"],
            ["policy", "show"], ["policy", "history"], ["gates", "show"], ["gates", "export"],
            ["apple", "key", "list"], ["merge", "list"], ["merge", "show", "1"],
        ]
        for command in commands {
            var command = command
            if command.first == "status", try !cli.run(["status", "--help"]).stdout.contains("--exact") { command.removeLast() }
            let onSQLite = try run(command, store: sqlite), onD1 = try run(command, store: d1.location)
            let label = command.joined(separator: " ")
            XCTAssertEqual(onD1.status, onSQLite.status, "\(label): \(onD1.all.prefix(2000))")
            XCTAssertEqual(normalized(onD1.stdout, d1.location, sqlite), normalized(onSQLite.stdout, sqlite), "[\(label)]")
            XCTAssertEqual(normalized(onD1.stderr, d1.location, sqlite), normalized(onSQLite.stderr, sqlite), label)
        }
        let health = try run(["health"], store: d1.location)
        XCTAssertEqual(health.status, 0, health.all)
        XCTAssertTrue(health.stdout.contains("store.integrity: PRAGMA quick_check: ok"), health.stdout)
        // The token is in this process's environment, and nowhere in what Gatehouse printed.
        let token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
        XCTAssertFalse(health.all.contains(token))
    }

    /// An offline copy as `wrangler d1 export` writes one (SQL text, no virtual tables, no BEGIN): every read job
    /// answers as on the store it came from; writes and init are refused in one line, changing nothing.
    func testAnOfflineCopyAnswersEveryReadJobAndRefusesWrites() throws {
        let scratch = try Scratch()
        let (sqlite, _) = try seededPair(scratch, users: 60)
        let copy = scratch.path("copy.sqlite")
        _ = try sqlite3(sqlite, ".backup '\(copy)'")
        // D1 has no name search index, and wrangler exports no virtual table.
        _ = try sqlite3(copy, """
            DROP TRIGGER gatehouse_user_search_insert; DROP TRIGGER gatehouse_user_search_update; DROP TRIGGER gatehouse_user_search_delete;
            DROP TABLE gatehouse_user_search; DROP TABLE gatehouse_user_search_names; DROP TABLE gatehouse_user_search_pending;
            """)
        let dump = try sqlite3(copy, ".dump").split(separator: "\n").filter { $0 != "BEGIN TRANSACTION;" && $0 != "COMMIT;" }.joined(separator: "\n")
        let export = scratch.path("export.sql")
        try ("PRAGMA defer_foreign_keys=TRUE;\n" + dump + "\n").write(toFile: export, atomically: true, encoding: .utf8)
        for command in [["status", "--json", "--exact"], ["users", "search", "a", "--limit", "9"], ["users", "duplicates", "--json"],
                        ["accounts", "check"], ["audit", "verify"], ["policy", "show"], ["gates", "show"], ["merge", "list"]] {
            let onCopy = try run(command, store: export), onStore = try run(command, store: sqlite)
            XCTAssertEqual(onCopy.status, onStore.status, "\(command): \(onCopy.all)")
            XCTAssertEqual(normalized(onCopy.stdout, export, sqlite), normalized(onStore.stdout, sqlite), "\(command)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: export))
        let write = try run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "x"], store: export)
        XCTAssertEqual(write.status, 1, write.all)
        XCTAssertTrue(write.stderr.contains("is an offline copy (a SQL dump): it is read-only"), write.stderr)
        let initialised = try run(["init"], store: export)
        XCTAssertEqual(initialised.status, 1, initialised.all)
        XCTAssertTrue(initialised.stderr.contains("offline copy"), initialised.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: export)), before, "the copy is never written")
        // Not a dump at all: one line, exit 1.
        let bad = scratch.path("bad.sql")
        try "not sql at all".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try run(["status"], store: bad)
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("is not a SQL dump Gatehouse can load"), refused.stderr)
    }

    func testInitOnAD1DatabaseAsWranglerAndBetterAuthLeftIt() throws {
        let scratch = try Scratch()
        let d1 = try TestStore.make(.d1, in: scratch)
        // Better Auth's tables as its own migration makes them on D1 (SQLite's shape), beside _cf_KV and d1_migrations.
        let created = try sqlite3(try XCTUnwrap(d1.d1File), try String(contentsOfFile: fixture("better-auth-1.5.sql"), encoding: .utf8))
        XCTAssertEqual(created, "")
        let initialised = try run(["init"], store: d1.location)
        XCTAssertEqual(initialised.status, 0, initialised.all)
        XCTAssertTrue(initialised.stdout.contains("Store \(d1.location)"), initialised.stdout)
        // Every file of migrations/sqlite (D1 runs SQLite's), however many there are.
        let migrations = try FileManager.default.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("migrations/sqlite").path)
        XCTAssertEqual(try d1.query("SELECT count(*) FROM gatehouse_migrations"), String(migrations.filter { $0.hasSuffix(".sql") }.count))
        XCTAssertEqual(try d1.query("SELECT count(*) FROM sqlite_master WHERE name IN ('_cf_KV', 'd1_migrations')"), "2")
        let again = try run(["init"], store: d1.location)
        XCTAssertEqual(again.status, 0, again.all)
        XCTAssertTrue(again.stdout.contains("already up to date"), again.stdout)
        let status = try run(["status"], store: d1.location)
        XCTAssertTrue(status.stdout.hasPrefix("store:         \(d1.location)\n"), status.stdout)
        XCTAssertEqual(try run(["audit", "verify"], store: d1.location).status, 0)
    }

    func testTheDemoSeedRefusesD1InOneLineAndWritesNothing() throws {
        let scratch = try Scratch()
        let d1 = try TestStore.make(.d1, in: scratch)
        XCTAssertEqual(try run(["init"], store: d1.location).status, 0)
        let seeded = try run(["demo", "seed", "--users", "5"], store: d1.location)
        XCTAssertEqual(seeded.status, 1, seeded.all)
        XCTAssertTrue(seeded.stderr.contains("cannot answer inside a write; nothing was written"), seeded.stderr)
        XCTAssertTrue(seeded.stderr.contains("wrangler d1 execute"), seeded.stderr)
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user"), "0")
    }

    func testConcurrentPolicyChangesTakeConsecutiveVersionsAndOneAuditChain() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch, users: 20)
        let writers = try (1...8).map { index in
            try cli.start(["policy", "set", "linkSocial.allowDifferentEmails", index % 2 == 0 ? "true" : "false", "--reason", "writer \(index)", "--store", d1.location])
        }
        for writer in writers {
            let result = try writer.finish()
            XCTAssertEqual(result.status, 0, result.all)
        }
        XCTAssertEqual(try d1.query("SELECT group_concat(version, ',') FROM (SELECT version FROM gatehouse_policy_history ORDER BY version)"), "1,2,3,4,5,6,7,8")
        XCTAssertEqual(try d1.query("SELECT version FROM gatehouse_policy_version"), "8")
        let verified = try run(["audit", "verify"], store: d1.location)
        XCTAssertEqual(verified.status, 0, verified.all)
        // --if-version: exactly one of eight racing writers wins.
        let racing = try (1...8).map { index in
            try cli.start(["policy", "set", "accountLinking.allowUnlinkingAll", "true", "--if-version", "8", "--reason", "race \(index)", "--store", d1.location])
        }
        let outcomes = try racing.map { try $0.finish() }
        XCTAssertEqual(outcomes.filter { $0.status == 0 }.count, 1, outcomes.map(\.all).joined(separator: "\n"))
        for lost in outcomes where lost.status != 0 { XCTAssertTrue(lost.stderr.contains("not 8"), lost.stderr) }
        XCTAssertEqual(try d1.query("SELECT version FROM gatehouse_policy_version"), "9")
    }

    func testMergeApplyAndUndoAreEachOneWriteRequestAndAStalePlanChangesNothing() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch)
        let (earlier, later) = try splitPair(d1.location)
        func plan() throws -> String {
            let planned = try run(["merge", "plan", "--from", earlier, "--into", later, "--keep-email", "target", "--json"], store: d1.location)
            XCTAssertEqual(planned.status, 0, planned.all)
            return try XCTUnwrap(try json(planned)["planID"] as? String)
        }
        // Better Auth writes a session for U2 after the plan: the plan is stale, and apply changes nothing.
        let stale = try plan()
        let before = try d1.query("SELECT count(*) FROM session; SELECT count(*) FROM account WHERE userId = '\(earlier)'")
        _ = try d1.query("INSERT INTO session (id, expiresAt, token, createdAt, updatedAt, userId) VALUES ('late', '2030-01-01T00:00:00.000Z', 'late-token', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '\(earlier)')")
        let refused = try run(["merge", "apply", stale, "--ticket", "T-1", "--yes"], store: d1.location)
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("changed since the plan"), refused.stderr)
        XCTAssertEqual(try d1.query("SELECT count(*) FROM account WHERE userId = '\(earlier)'"), before.split(separator: "\n").last.map(String.init))
        XCTAssertEqual(try d1.query("SELECT count(*) FROM gatehouse_merges"), "0")

        let fresh = try plan()
        try D1Control.reset()
        let applied = try run(["merge", "apply", fresh, "--ticket", "T-2", "--yes"], store: d1.location)
        XCTAssertEqual(applied.status, 0, applied.all)
        XCTAssertEqual(try writeRequests(), 1, "merge apply sends its writes in one request")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'"), "0")
        try D1Control.reset()
        let undone = try run(["merge", "undo", "1", "--reason", "wrong person"], store: d1.location)
        XCTAssertEqual(undone.status, 0, undone.all)
        XCTAssertEqual(try writeRequests(), 1, "merge undo sends its writes in one request")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'"), "1")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM session WHERE id = 'late'"), "1")
        XCTAssertEqual(try run(["audit", "verify"], store: d1.location).status, 0)
        let check = try run(["accounts", "check"], store: d1.location)
        XCTAssertEqual(check.status, 0, check.all)
    }

    /// A plan keeps what it read (`ReadRecord`) for the apply to check instead of reading; once the schema changed,
    /// the apply reads again: a column added to the sync server's `users` after the plan (a table whose columns the
    /// opening does not read) makes it stale, and nothing is written.
    func testAPlanMadeBeforeASchemaChangeIsReadAgainAndRefused() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch)
        let (earlier, later) = try splitPair(d1.location)
        let planned = try run(["merge", "plan", "--from", earlier, "--into", later, "--keep-email", "target", "--json"], store: d1.location)
        let planID = try XCTUnwrap(try json(planned)["planID"] as? String, planned.all)
        XCTAssertNotEqual(try d1.query("SELECT count(*) FROM users WHERE sub IN ('better_auth|\(earlier)', 'better_auth|\(later)')"), "0")
        _ = try d1.query("ALTER TABLE users ADD COLUMN note TEXT DEFAULT 'n'")
        try D1Control.reset()
        let refused = try run(["merge", "apply", planID, "--ticket", "T-1", "--yes"], store: d1.location)
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("changed since the plan"), refused.stderr)
        XCTAssertEqual(try writeRequests(), 0, "nothing was sent to write")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'"), "1")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM gatehouse_merges"), "0")
    }

    /// `merge apply` killed (SIGKILL) at points from its first reads to after its write request was sent: each time
    /// the database is either untouched or fully merged, with a record of the merge exactly when it is merged.
    func testAMergeApplyKilledAtAnyPointLeavesTheStoreUntouchedOrFullyMerged() throws {
        let scratch = try Scratch()
        let (sqlite, _) = try seededPair(scratch)
        let (earlier, later) = try splitPair(sqlite)
        var outcomes: [String] = []
        for killAfter in [0.05, 0.4, 0.9, 1.5, 2.2, 2.8, 3.2, 3.6] {
            let d1 = try d1Copy(of: sqlite, scratch)
            let planned = try run(["merge", "plan", "--from", earlier, "--into", later, "--keep-email", "target", "--json"], store: d1.location)
            let plan = try XCTUnwrap(try json(planned)["planID"] as? String, planned.all)
            let before = try d1.query("SELECT count(*) FROM account WHERE userId = '\(earlier)'; SELECT count(*) FROM session")
            // Every request answers 150 ms late, so the kill lands among the reads, or after the write was sent.
            try D1Control.reset()
            try D1Control.fault("slow", count: 1000, ["delay_ms": 150])
            let running = try cli.start(["merge", "apply", plan, "--ticket", "T-kill", "--yes", "--store", d1.location])
            Thread.sleep(forTimeInterval: killAfter)
            kill(running.process.processIdentifier, SIGKILL)
            _ = try running.finish()
            Thread.sleep(forTimeInterval: 0.4)
            try D1Control.reset()
            let merges = try d1.query("SELECT count(*) FROM gatehouse_merges")
            let sourceLeft = try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'")
            if merges == "0" {
                XCTAssertEqual(sourceLeft, "1", "killed after \(killAfter) s: no merge record, so nothing may be merged")
                XCTAssertEqual(try d1.query("SELECT count(*) FROM account WHERE userId = '\(earlier)'; SELECT count(*) FROM session"), before)
                outcomes.append("untouched")
            } else {
                XCTAssertEqual(merges, "1")
                XCTAssertEqual(sourceLeft, "0", "killed after \(killAfter) s: a merge record, so the merge is whole")
                XCTAssertEqual(try d1.query("SELECT count(*) FROM account WHERE userId = '\(earlier)'"), "0")
                outcomes.append("merged")
            }
            let verified = try run(["audit", "verify"], store: d1.location)
            XCTAssertEqual(verified.status, 0, verified.all)
            let check = try run(["accounts", "check"], store: d1.location)
            XCTAssertEqual(check.status, 0, "killed after \(killAfter) s: \(check.all)")
        }
        XCTAssertTrue(outcomes.contains("untouched"), "\(outcomes)")
        print("merge apply killed at 8 points: \(outcomes)")
    }

    /// Requests since the last reset that wrote (their statements are more than reads).
    func writeRequests() throws -> Int {
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        let log = try D1Control.get(control + "/requests")["log"] as? [[String: Any]] ?? []
        return log.filter { entry in
            (entry["statements"] as? [String] ?? []).contains { statement in
                let upper = statement.uppercased()
                return upper.hasPrefix("INSERT") || upper.hasPrefix("UPDATE") || upper.hasPrefix("DELETE")
            }
        }.count
    }

    func testEmittedSQLRunsAsOneD1BatchAndRefusesAChangedCopy() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch)
        let (earlier, later) = try splitPair(d1.location)
        let script = scratch.path("merge.sql")
        let planned = try run(["merge", "plan", "--from", earlier, "--into", later, "--keep-email", "target", "--emit-sql", script], store: d1.location)
        XCTAssertEqual(planned.status, 0, planned.all)
        let sql = try String(contentsOfFile: script, encoding: .utf8)
        XCTAssertFalse(sql.uppercased().contains("BEGIN"), "D1 refuses BEGIN")
        // As `wrangler d1 execute --file` sends it: the whole file as one `sql`, run by D1 as one batch.
        func execute() throws -> [String: Any] {
            let base = try XCTUnwrap(TestStore.environment["CLOUDFLARE_API_BASE_URL"])
            let parts = d1.location.dropFirst("d1://".count).split(separator: "/")
            let token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["sql": sql]), as: UTF8.self)
            let result = try Tool.run("/usr/bin/curl", ["-s", "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                                          "--data-binary", "@-", "\(base)/accounts/\(parts[0])/d1/database/\(parts[1])/query"], stdin: body)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        }
        let first = try execute()
        XCTAssertEqual(first["success"] as? Bool, true, "\(first)")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'"), "0")
        let dump = try d1.query("SELECT count(*) FROM account; SELECT count(*) FROM session")
        let second = try execute()
        XCTAssertEqual(second["success"] as? Bool, false, "\(second)")
        XCTAssertTrue("\(second)".contains("not as planned"), "\(second)")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM account; SELECT count(*) FROM session"), dump)
    }

    func testEachAPIFailureIsOneClearLineWithoutTheToken() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch, users: 10)
        let token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
        func expectFailure(_ arguments: [String], store: String? = nil, environment: [String: String] = [:], _ words: String,
                           line: UInt = #line) throws {
            let result = try run(arguments, store: store ?? d1.location, environment: environment)
            XCTAssertEqual(result.status, 1, result.all, line: line)
            XCTAssertTrue(result.stderr.hasPrefix("gatehouse: ") && result.stderr.contains(words), result.stderr, line: line)
            XCTAssertFalse(result.all.contains(token), "the token was printed", line: line)
            XCTAssertEqual(result.stdout, "", line: line)
        }
        try D1Control.reset()
        try expectFailure(["status"], environment: ["CLOUDFLARE_API_TOKEN": "wrong-token"], "refused the API token")
        try expectFailure(["status"], environment: ["CLOUDFLARE_API_TOKEN": ""], "CLOUDFLARE_API_TOKEN")
        let missing = d1.location.dropLast(12) + "000000000000"
        try expectFailure(["status"], store: String(missing), "no D1 database")
        // A 429 is retried after its Retry-After; one that persists is one line.
        try D1Control.fault("429", count: 2, ["retry_after": 1])
        let retried = try run(["policy", "show"], store: d1.location)
        XCTAssertEqual(retried.status, 0, retried.all)
        try D1Control.fault("429", count: 20, ["retry_after": 0])
        try expectFailure(["policy", "show"], "rate limit")
        try D1Control.reset()
        // A server error on a read is retried; on a write it is reported as of unknown outcome.
        try D1Control.fault("503", count: 1)
        XCTAssertEqual(try run(["policy", "show"], store: d1.location).status, 0)
        try D1Control.reset()
        try D1Control.fault("notjson", count: 10)
        try expectFailure(["policy", "show"], "not JSON")
        try D1Control.reset()
        try D1Control.fault("bigint", count: 10)
        try expectFailure(["policy", "show"], "beyond 2^53")
        try D1Control.reset()
        // A write cut off after it was sent: applied or not, never half, and said so.
        let cut = try cutWrite(store: d1.location)
        let version = try d1.query("SELECT version FROM gatehouse_policy_history WHERE reason = 'counting'")
        XCTAssertEqual(cut.status, 1, cut.all)
        XCTAssertTrue(cut.stderr.contains("may or may not have been applied"), cut.stderr)
        XCTAssertFalse(cut.all.contains(token))
        let after = try d1.query("SELECT version FROM gatehouse_policy_version")
        XCTAssertTrue(after == version || after == String((Int(version) ?? 0) + 1), "\(version) → \(after)")
        let history = try d1.query("SELECT count(*) FROM gatehouse_policy_history WHERE reason = 'cut'")
        XCTAssertEqual(history, after == version ? "0" : "1", "the change and its history row went together")
        XCTAssertEqual(try run(["audit", "verify"], store: d1.location).status, 0)
    }

    /// A write whose answer is a malformed status line (`HTTP/1.1 2000 Weird`, curl's error 1) after D1 ran it — a
    /// broken proxy that forwarded the request — is of unknown outcome: never sent again (the retry's guards would
    /// fail on the write's own rows and the body run again on fresh reads, writing a second version), and said so:
    /// exit 1, check the audit log. Cut off after it ran, the same.
    func testAWriteAnsweredWithAMalformedStatusLineIsNeverSentTwice() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch, users: 10)
        let token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
        for (index, fault) in ["badstatus", "cut"].enumerated() {
            let before = Int(try d1.query("SELECT version FROM gatehouse_policy_version")) ?? -1
            let audited = Int(try d1.query("SELECT count(*) FROM gatehouse_audit")) ?? -1
            try D1Control.reset()
            try D1Control.fault(fault, count: 1, ["execute": true, "writes_only": true])
            let result = try run(["policy", "set", "accountLinking.enabled", index == 0 ? "false" : "true", "--reason", "weird \(fault)"], store: d1.location)
            XCTAssertEqual(result.status, 1, "\(fault): \(result.all)")
            XCTAssertTrue(result.stderr.contains("may or may not have been applied") && result.stderr.contains("gatehouse audit"), "\(fault): \(result.stderr)")
            XCTAssertFalse(result.all.contains(token))
            XCTAssertEqual(try writeRequests(), 1, "\(fault): the write was sent once")
            XCTAssertEqual(Int(try d1.query("SELECT version FROM gatehouse_policy_version")), before + 1, "\(fault): it ran once, as D1 ran it")
            XCTAssertEqual(try d1.query("SELECT count(*) FROM gatehouse_policy_history WHERE reason = 'weird \(fault)'"), "1", fault)
            XCTAssertEqual(Int(try d1.query("SELECT count(*) FROM gatehouse_audit")), audited + 1, "\(fault): one audit entry")
            XCTAssertEqual(try run(["audit", "verify"], store: d1.location).status, 0)
        }
        // Before it ran, the same answer: unknown to the client, so the same words, and nothing written.
        let before = try d1.query("SELECT version FROM gatehouse_policy_version")
        try D1Control.reset()
        try D1Control.fault("badstatus", count: 1, ["execute": false, "writes_only": true])
        let unsent = try run(["policy", "set", "accountLinking.enabled", "false", "--reason", "not run"], store: d1.location)
        XCTAssertEqual(unsent.status, 1, unsent.all)
        XCTAssertTrue(unsent.stderr.contains("may or may not have been applied"), unsent.stderr)
        XCTAssertEqual(try writeRequests(), 0, "the faulted request logs no statements; a second one would")
        XCTAssertEqual(try d1.query("SELECT version FROM gatehouse_policy_version"), before)
        // A read answered so is read again.
        try D1Control.reset()
        try D1Control.fault("badstatus", count: 1, ["execute": true])
        let read = try run(["policy", "show"], store: d1.location)
        XCTAssertEqual(read.status, 0, read.all)
        XCTAssertEqual(try D1Control.requests(), 2)
    }

    /// A D1 base URL that only looks local (a user name before `@`, an IPv6 form of another address) is refused before
    /// anything is sent: the token never leaves in the clear for another machine.
    func testABaseURLThatOnlyLooksLocalIsRefusedBeforeAnythingIsSent() throws {
        let scratch = try Scratch()
        let d1 = try TestStore.make(.d1, in: scratch)
        let token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
        for base in ["http://localhost:1@192.0.2.2:9/client/v4", "http://127.0.0.1:x@192.0.2.2:9/client/v4", "http://[::ffff:192.0.2.2]:9/client/v4"] {
            let started = Date()
            let result = try run(["status"], store: d1.location, environment: ["CLOUDFLARE_API_BASE_URL": base])
            XCTAssertEqual(result.status, 1, result.all)
            XCTAssertTrue(result.stderr.contains("CLOUDFLARE_API_BASE_URL (http://"), result.stderr)
            XCTAssertTrue(result.stderr.contains("user name or password") || result.stderr.contains("not this machine"), result.stderr)
            XCTAssertFalse(result.all.contains(token) || result.all.contains("localhost:1@") || result.all.contains(":x@"), result.all)
            XCTAssertLessThan(Date().timeIntervalSince(started), 3, "refused at once, not after a connection attempt")
        }
    }

    /// An answer over the cap (`GATEHOUSE_D1_MAX_ANSWER_BYTES`) is refused before any of it is parsed, in one line
    /// naming the setting; a read is not asked again for it.
    func testAnAnswerOverTheCapIsRefusedBeforeItIsParsed() throws {
        let scratch = try Scratch()
        let (_, d1) = try seededPair(scratch, users: 10)
        try D1Control.reset()
        try D1Control.fault("huge", count: 4, ["bytes": 3_000_000])
        let result = try run(["policy", "show"], store: d1.location, environment: ["GATEHOUSE_D1_MAX_ANSWER_BYTES": "1048576"])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("more than 1 MiB") && result.stderr.contains("GATEHOUSE_D1_MAX_ANSWER_BYTES"), result.stderr)
        XCTAssertEqual(try D1Control.requests(), 1, "refused, not asked again")
        try D1Control.reset()
    }

    /// A hostile answer under the cap is parsed in a few times its size, not tens of times: a BLOB of 20 MB of JSON
    /// (`[1,1,…]`, ten million values) is kept as its bytes, and every array is reserved at its size, not grown by
    /// doubling (which takes 1.09 GB for 38 MB of it).
    func testAHostileAnswerUnderTheCapTakesAFewTimesItsSizeInMemory() throws {
        let scratch = try Scratch()
        let d1 = try TestStore.make(.d1, in: scratch)
        try D1Control.reset()
        try D1Control.fault("huge", count: 4, ["bytes": 20_000_000])
        defer { try? D1Control.reset() }
        // The child's peak resident size, from a parent (python) whose only child it is.
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in cli.environment { environment[key] = value }
        let measured = try Tool.run("/usr/bin/python3", ["-c", """
            import resource, subprocess, sys
            r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, r.returncode)
            print(r.stderr, file=sys.stderr)
            """, CLI.binary, "users", "show", "x", "--store", d1.location], environment: environment)
        let parts = measured.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(parts.count, 2, measured.all)
        XCTAssertEqual(parts.last, 1, measured.all)
        XCTAssertTrue(measured.stderr.contains("results for"), measured.stderr)
        XCTAssertLessThan(parts.first ?? .max, 150, "MB of resident memory for a 20 MB answer")
        print("peak RSS for a 20 MB hostile answer: \(parts.first ?? -1) MB")
    }

    /// Opening a store asks everything it needs in one request (the catalog, the migrations applied, Better Auth's
    /// date samples as Better Auth's own shape names them, and the command's first reads of Gatehouse's tables), so a
    /// page of reads costs two requests and a policy change two. A guess that does not hold — a store not yet
    /// initialised, columns in snake_case — is asked again the plain way, with the same answers as on SQLite.
    func testOpeningIsOneRequestAndAWrongGuessIsAskedAgain() throws {
        let scratch = try Scratch()
        let (sqlite, d1) = try seededPair(scratch)
        let id = try XCTUnwrap((try json(try run(["users", "search", "a", "--json"], store: sqlite))["users"] as? [[String: Any]])?.first?["id"] as? String)
        XCTAssertEqual(try requestsOf(["users", "show", id], store: d1.location), 2, "the opening and the page's snapshot")
        XCTAssertEqual(try requestsOf(["policy", "show"], store: d1.location), 1, "the policy rides with the opening")
        XCTAssertEqual(try requestsOf(["policy", "set", "accountLinking.enabled", "true", "--reason", "two requests"], store: d1.location), 2,
                       "the opening with the policy and the audit head, then the guarded write")
        let (earlier, later) = try splitPair(d1.location)
        let plan = try json(try run(["merge", "plan", "--from", earlier, "--into", later, "--keep-email", "target", "--json"], store: d1.location))
        let planID = try XCTUnwrap(plan["planID"] as? String)
        XCTAssertEqual(try requestsOf(["merge", "apply", planID, "--ticket", "T-1", "--yes"], store: d1.location), 2,
                       "the opening (with the plan) and the write, the plan's reads checked in it")
        XCTAssertEqual(try d1.query("SELECT count(*) FROM user WHERE id = '\(earlier)'"), "0")
        XCTAssertEqual(try run(["audit", "verify"], store: d1.location).status, 0)

        // Not initialised: the guessed read of gatehouse_migrations is refused, and the answer is the usual one.
        let bare = try TestStore.make(.d1, in: scratch, name: "bare")
        XCTAssertEqual(try sqlite3(try XCTUnwrap(bare.d1File), try String(contentsOfFile: fixture("better-auth-1.5.sql"), encoding: .utf8)), "")
        let refused = try run(["users", "show", "x"], store: bare.location)
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("is not a Gatehouse store yet"), refused.stderr)

        // Dates as epoch seconds (an older Drizzle schema, camelCase): the guessed samples are the real ones.
        // Columns in snake_case: the guess is not used, the samples are read after the catalog.
        let fixtureSQL = try String(contentsOfFile: fixture("drizzle-seconds.sql"), encoding: .utf8)
        let snake = fixtureSQL.replacingOccurrences(of: "`createdAt`", with: "`created_at`").replacingOccurrences(of: "`updatedAt`", with: "`updated_at`")
        for (name, schema) in [("seconds", fixtureSQL), ("snake", snake)] {
            let local = scratch.path("\(name).sqlite")
            XCTAssertEqual(try sqlite3(local, schema), "")
            XCTAssertEqual(try run(["init"], store: local).status, 0)
            let copy = try d1Copy(of: local, scratch)
            for command in [["users", "show", "ingrid@example.com", "--json"], ["users", "search", "Ingrid"], ["accounts", "check", "--json"]] {
                let onSQLite = try run(command, store: local), onD1 = try run(command, store: copy.location)
                XCTAssertEqual(onD1.status, onSQLite.status, "\(name) \(command): \(onD1.all)")
                XCTAssertEqual(normalized(onD1.stdout, copy.location, local), normalized(onSQLite.stdout, local), "\(name) \(command)")
            }
            XCTAssertTrue(try run(["users", "show", "ingrid@example.com", "--json"], store: copy.location).stdout.contains("2025-01-02"), name)
        }
    }

    /// The scans page through their tables by key, a bounded page a request (here 10 rows, `GATEHOUSE_D1_PAGE_ROWS`),
    /// and answer as SQLite does; `accounts check` counts and samples every check in one request, and the duplicates'
    /// pairs are explained a batch at a time, not three requests a user.
    func testScansPageThroughTablesAndAnswerAsOnSQLite() throws {
        let scratch = try Scratch()
        let (sqlite, d1) = try seededPair(scratch)
        let paged = ["GATEHOUSE_D1_PAGE_ROWS": "10"]
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        let users = try d1.query("SELECT count(*) FROM user"), sessions = try d1.query("SELECT count(*) FROM session")
        for command in [["users", "duplicates", "--json"], ["users", "search", "ana"], ["audit", "verify"], ["accounts", "check", "--json"]] {
            let onSQLite = try run(command, store: sqlite)
            try D1Control.reset()
            let onD1 = try run(command, store: d1.location, environment: paged)
            XCTAssertEqual(onD1.status, onSQLite.status, "\(command): \(onD1.all.prefix(2000))")
            XCTAssertEqual(normalized(onD1.stdout, d1.location, sqlite), normalized(onSQLite.stdout, sqlite), "\(command)")
            let log = try D1Control.get(control + "/requests")["log"] as? [[String: Any]] ?? []
            let statements = log.flatMap { ($0["statements"] as? [Any] ?? []).map { "\($0)" } }
            // No statement reads a whole table in one answer: every scan is paged.
            for statement in statements where statement.contains("FROM \"user\"") && !statement.contains("WHERE") && !statement.contains("count(") {
                XCTAssertTrue(statement.contains("LIMIT 10"), "\(command): \(statement)")
            }
            if command[1] == "duplicates" {
                let pages = (Int(users) ?? 0) / 10 + (Int(sessions) ?? 0) / 10
                XCTAssertGreaterThanOrEqual(log.count, pages, "the user and session tables in pages of 10")
                XCTAssertLessThan(log.count, pages + 20, "the pairs explained a batch at a time")
            }
            if command[0] == "accounts" {
                XCTAssertEqual(statements.filter { $0.contains("NOT EXISTS") && !$0.contains("LIMIT") && !$0.contains("count(") }, [],
                               "every anti-join counted and sampled, none sent back whole")
            }
        }
    }

    /// A table without a rowid (`WITHOUT ROWID`) pages by its primary key: the answers are SQLite's, and no page of it
    /// is unbounded.
    func testATableWithoutRowidIsPagedByItsPrimaryKey() throws {
        let scratch = try Scratch()
        let (sqlite, d1) = try seededPair(scratch)
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        let ddl = try d1.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'session'")
        let rebuilt = ddl.replacingOccurrences(of: #"^CREATE TABLE "?session"?"#, with: #"CREATE TABLE "session_rebuilt""#, options: .regularExpression)
        XCTAssertNotEqual(rebuilt, ddl)
        _ = try d1.query("""
            PRAGMA foreign_keys = off; BEGIN; \(rebuilt) WITHOUT ROWID; INSERT INTO session_rebuilt SELECT * FROM session;
            DROP TABLE session; ALTER TABLE session_rebuilt RENAME TO session; COMMIT;
            """)
        XCTAssertEqual(try d1.query("SELECT count(*) FROM pragma_index_list('session') WHERE origin = 'pk'"), "1")
        let onSQLite = try run(["users", "duplicates", "--json"], store: sqlite)
        try D1Control.reset()
        let onD1 = try run(["users", "duplicates", "--json"], store: d1.location, environment: ["GATEHOUSE_D1_PAGE_ROWS": "10"])
        XCTAssertEqual(onD1.status, 0, onD1.all)
        XCTAssertEqual(normalized(onD1.stdout, d1.location, sqlite), normalized(onSQLite.stdout, sqlite))
        let log = try D1Control.get(control + "/requests")["log"] as? [[String: Any]] ?? []
        let sessionReads = log.flatMap { ($0["statements"] as? [Any] ?? []).map { "\($0)" } }.filter { $0.contains("FROM \"session\"") && !$0.contains("count(") }
        XCTAssertGreaterThan(sessionReads.count, 2, "the session table read in pages")
        XCTAssertTrue(sessionReads.contains { $0.contains("rowid") }, "paged by rowid first, refused, then by the key: \(sessionReads.prefix(3))")
        for statement in sessionReads where !statement.contains("rowid") { XCTAssertTrue(statement.contains("LIMIT 10"), statement) }
    }

    /// The number of API requests a command makes.
    func requestsOf(_ arguments: [String], store: String) throws -> Int {
        try D1Control.reset()
        _ = try run(arguments, store: store)
        return try D1Control.requests()
    }

    /// A policy change whose write request (its last) is cut off after D1 ran it: the requests before it (the reads,
    /// counted on a first change) pass untouched.
    func cutWrite(store: String) throws -> CLI.Result {
        let reads = try requestsOf(["policy", "set", "accountLinking.enabled", "true", "--reason", "counting"], store: store) - 1
        try D1Control.reset()
        if reads > 0 { try D1Control.fault("slow", count: reads, ["delay_ms": 0]) }
        try D1Control.fault("cut", count: 1, ["execute": true])
        return try run(["policy", "set", "accountLinking.enabled", "false", "--reason", "cut"], store: store)
    }
}
