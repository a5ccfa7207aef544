import Foundation
import XCTest

/// `gatehouse health` as a timer runs it: statuses, exit codes, the textfile, the recorded history.
final class HealthCLITests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("h.sqlite")
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "30", "-q"]).status, 0)
    }

    func testHealthyStoreExitsZero() throws {
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.hasPrefix("OK: "), result.stdout)
        XCTAssertTrue(result.stdout.contains("[ok] store.integrity"), result.stdout)
    }

    func testLinkSocialSwitchWithoutExpiryWarns() throws {
        XCTAssertEqual(try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "INC-1", "--store", store]).status, 0)
        let result = try cli.run(["health", "--store", store, "--json"])
        XCTAssertEqual(result.status, 1, result.all)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["status"] as? String, "warning")
        let timed = try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--for", "2h", "--reason", "INC-1 window", "--store", store])
        XCTAssertEqual(timed.status, 0, timed.all)
        XCTAssertEqual(try cli.run(["health", "--store", store]).status, 0)
    }

    func testAutoLinkTakeoverRiskIsCritical() throws {
        let set = try cli.run(["policy", "set", "autoLink.allowDifferentEmails", "true", "--reason", "test", "--accept-takeover-risk", "--store", store])
        XCTAssertEqual(set.status, 0, set.all)
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 2, result.all)
        XCTAssertTrue(result.stdout.hasPrefix("CRITICAL: "), result.stdout)
        XCTAssertTrue(result.stdout.contains("do: gatehouse policy set autoLink.allowDifferentEmails false"), result.stdout)
    }

    func testBrokenAuditChainIsCritical() throws {
        _ = try sqlite3(store, "DROP TRIGGER gatehouse_audit_no_update; UPDATE gatehouse_audit SET actor = 'x' WHERE id = 1;")
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stdout.contains("[critical] store.audit_chain"), result.stdout)
    }

    func testUnopenableStoreIsUnknown() throws {
        XCTAssertEqual(try cli.run(["health", "--store", scratch.path("absent.sqlite")]).status, 3)
        let garbage = scratch.path("garbage.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        let result = try cli.run(["health", "--store", garbage, "--json"])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stdout.contains("\"unknown\""), result.stdout)
    }

    func testPrometheusTextfileIsWrittenAtomicallyWithoutTimestamps() throws {
        let dir = scratch.path("textfile")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/gatehouse.prom"
        XCTAssertEqual(try cli.run(["health", "--store", store, "--prometheus", file]).status, 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("gatehouse_check_status{check=\"store.integrity\"} 0\n"), text)
        XCTAssertTrue(text.contains("gatehouse_build_info{version="), text)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertEqual(line.split(separator: " ").count, 2, "a sample has a name and a value, no timestamp: \(line)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["gatehouse.prom"], "no temporary file left behind")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") {
            let check = try Tool.run("/usr/bin/promtool", ["check", "metrics"], stdin: text)
            XCTAssertEqual(check.status, 0, check.all)
        }
        // A store that cannot be opened is UNKNOWN, and the textfile says so at once.
        let unknown = try cli.run(["health", "--store", scratch.path("absent.sqlite"), "--prometheus", file])
        XCTAssertEqual(unknown.status, 3)
        let unknownText = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(unknownText.contains("gatehouse_health_status 3\n"), unknownText)
        XCTAssertTrue(unknownText.contains("gatehouse_check_status{check=\"store.open\"} 3\n"), unknownText)
        let missing = try cli.run(["health", "--store", store, "--prometheus", scratch.path("nowhere/g.prom")])
        XCTAssertEqual(missing.status, 3, "results that cannot be written are not OK")
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
    }

    func testRecordedRunsAndStoppedTimer() throws {
        XCTAssertEqual(try cli.run(["health", "--store", store, "--record"]).status, 0)
        let history = try cli.run(["health", "history", "--store", store, "--json"])
        let runs = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(runs?.count, 1)
        _ = try sqlite3(store, "UPDATE gatehouse_health_runs SET at = '2020-01-01T00:00:00.000Z';")
        let stale = try cli.run(["health", "--store", store])
        XCTAssertEqual(stale.status, 1, stale.all)
        XCTAssertTrue(stale.stdout.contains("[warning] health.last_run"), stale.stdout)
    }

    func testRecentUnprovisionedSignupsAndDanglingAccountsWarn() throws {
        // A signup from an hour ago whose sync row is missing: provisioning is broken now.
        _ = try sqlite3(store, """
            UPDATE user SET createdAt = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour') WHERE id = (SELECT substr(sub, 13) FROM users LIMIT 1);
            DELETE FROM workspaces WHERE owner_id = (SELECT id FROM users LIMIT 1);
            DELETE FROM subscriptions WHERE user_id = (SELECT id FROM users LIMIT 1);
            DELETE FROM users WHERE id = (SELECT id FROM users LIMIT 1);
            """)
        var result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stdout.contains("[warning] accounts.unprovisioned: 1 signup(s) of the last 4w2d have no sync users row"), result.stdout)
        // An account row whose user is gone (written with foreign keys off, as a buggy import would).
        _ = try sqlite3(store, """
            PRAGMA foreign_keys = OFF;
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt)
            VALUES ('dangling0000000000000000000000001', 'https://accounts.google.com', '1999', 'google', 'nobody', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            """)
        result = try cli.run(["health", "--store", store])
        XCTAssertTrue(result.stdout.contains("[warning] accounts.dangling: 1 account row(s) belong to no user"), result.stdout)
    }

    /// Where the budget cannot walk every user (here: a look at the clock every 4 users, and no budget), recorded runs
    /// share the account-links walk, each a window of user ids from where the last stopped; the cycle's counts are the
    /// whole walk's, dirt in any window included, and a run that is not recorded moves nothing on.
    func testTheAccountLinksWalkIsSharedByRecordedRuns() throws {
        _ = try sqlite3(store, """
            UPDATE user SET createdAt = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour') WHERE id = (SELECT substr(sub, 13) FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM workspaces WHERE owner_id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM subscriptions WHERE user_id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM users WHERE id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            PRAGMA foreign_keys = OFF;
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt)
            VALUES ('dangling0000000000000000000000001', 'https://accounts.google.com', '1999', 'google', '0', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            """)
        try assertAccountLinksCycle(cli, store: store)
    }

    /// The store.integrity check of one `--json` run: its summary and its per-table verdict samples.
    private func integrity(_ extra: [String]) throws -> (status: Int32, summary: String, verdicts: [String: Double]) {
        let result = try cli.run(["health", "--store", store, "--json"] + extra)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        let check = try XCTUnwrap((object["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "store.integrity" }, result.stdout)
        let samples = check["samples"] as? [[String: Any]] ?? []
        var verdicts: [String: Double] = [:]
        for sample in samples where sample["metric"] as? String == "gatehouse_store_integrity_checked_timestamp_seconds" {
            verdicts[(sample["labels"] as? [String: String])?["table"] ?? "?"] = sample["value"] as? Double
        }
        return (result.status, check["summary"] as? String ?? "", verdicts)
    }

    func testQuickCheckSweepCoversEveryTableAcrossRecordedRuns() throws {
        let tables = try sqlite3(store, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%';")
        let count = try XCTUnwrap(Int(tables))
        // Within the default budget a small store is checked whole.
        XCTAssertTrue(try integrity([]).summary.hasPrefix("PRAGMA quick_check: ok (all \(count) tables and their indexes)"))
        // A zero budget checks one table per run: the never-checked ones first, each once, then the oldest.
        var seen: [String] = []
        for run in 1...count {
            let (status, summary, verdicts) = try integrity(["--record", "--sweep-budget", "0"])
            XCTAssertEqual(status, 0, summary)
            XCTAssertEqual(verdicts.count, run, "verdicts carry forward through recorded runs: \(summary)")
            let new = Set(verdicts.keys).subtracting(seen)
            XCTAssertEqual(new.count, 1, summary)
            seen += new
            XCTAssertTrue(summary.contains("(1 of \(count) tables this run; "), summary)
            XCTAssertTrue(summary.contains(run < count ? "\(count - run) not checked yet" : "the others were clean in earlier runs"), summary)
        }
        XCTAssertEqual(seen, seen.sorted(), "never-checked tables go by name")
        let next = try integrity(["--sweep-budget", "0"]).summary
        XCTAssertTrue(next.hasPrefix("PRAGMA quick_check: ok on \(seen[0]) "), "then the oldest verdict comes first: \(next)")
        // The textfile gives each table's verdict time.
        let file = scratch.path("g.prom")
        _ = try cli.run(["health", "--store", store, "--prometheus", file])
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("gatehouse_store_integrity_checked_timestamp_seconds{table=\"session\"} "), text)
        // --deep checks the whole file at once.
        XCTAssertEqual(try integrity(["--deep"]).summary, "PRAGMA integrity_check: ok (the whole file)")
    }

    func testDamagedTableIsCritical() throws {
        // The last leaf page of the session table overwritten, as a failing disk or a stray writer would.
        _ = try sqlite3(store, "PRAGMA wal_checkpoint(TRUNCATE);")
        let page = try XCTUnwrap(Int(try sqlite3(store, "SELECT pageno FROM dbstat WHERE name = 'session' AND pagetype = 'leaf' ORDER BY pageno DESC LIMIT 1;")))
        let size = try XCTUnwrap(Int(try sqlite3(store, "PRAGMA page_size;")))
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: store))
        try handle.seek(toOffset: UInt64((page - 1) * size + 8))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 64))
        try handle.close()
        for extra in [["--record"], ["--deep"]] {
            let result = try cli.run(["health", "--store", store] + extra)
            XCTAssertEqual(result.status, 2, result.all)
            XCTAssertTrue(result.stdout.contains("[critical] store.integrity: PRAGMA "), result.stdout)
            XCTAssertTrue(result.stdout.contains("do: stop writers, copy the store aside"), result.stdout)
        }
        let swept = try integrity([])
        XCTAssertNil(swept.verdicts["session"], "a damaged table has no clean verdict")
        XCTAssertNotNil(swept.verdicts["account"], "the others have theirs")
        XCTAssertTrue(swept.summary.contains("session: "), swept.summary)
    }

    func testBadOptionsAreUsageErrors() throws {
        XCTAssertEqual(try cli.run(["health", "--store", store, "--warn-days", "5", "--crit-days", "10"]).status, 2)
        XCTAssertEqual(try cli.run(["health", "--store", store, "--warn-days", "-1"]).status, 2)
        XCTAssertEqual(try cli.run(["health", "--store", store, "--expect-every", "10s"]).status, 2)
        XCTAssertEqual(try cli.run(["health", "--store", store, "--sweep-budget", "2h"]).status, 2)
        let garbled = try cli.run(["health", "--store", store, "--sweep-budget", "soon"])
        XCTAssertNotEqual(garbled.status, 0)
        XCTAssertTrue(garbled.stderr.contains("\"soon\" is not a duration"), garbled.stderr)
    }
}

/// The Apple checks of `gatehouse health`: the ring and tracked client secrets.
final class AppleHealthCLITests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("a.sqlite")
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "10", "-q"]).status, 0)
        let key = try AppleTools.p256Key("HEALTH1234", in: scratch.url.path)
        XCTAssertEqual(try cli.run(["apple", "key", "import", key, "--team-id", "TEAMID1234", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["apple", "key", "activate", "HEALTH1234", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["providers", "set", "apple", "--team-id", "TEAMID1234", "--services-id", "com.example.web", "--bundle-id", "com.example.app", "--store", store]).status, 0)
    }

    private func report(_ extra: [String] = []) throws -> (Int32, [String: String]) {
        let result = try cli.run(["health", "--store", store, "--json"] + extra)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        let checks = (object["checks"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) { $0[$1["id"] as! String] = $1["status"] as? String }
        return (result.status, checks)
    }

    func testActiveKeyPassesAndASoonExpiringSecretAlarms() throws {
        var (status, checks) = try report()
        XCTAssertEqual(status, 0)
        XCTAssertEqual(checks["apple.active_key"], "ok")
        XCTAssertEqual(checks["apple.master_key"], "ok")
        // A static secret with 20 days left warns; one with 10 days left is critical.
        for (ttl, expected, code) in [("20d", "warning", Int32(1)), ("10d", "critical", Int32(2))] {
            let minted = try cli.run(["apple", "secret", "mint", "--ttl", ttl, "--store", store])
            XCTAssertEqual(minted.status, 0, minted.all)
            let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? ""
            XCTAssertEqual(try cli.run(["apple", "secret", "track", "-", "--store", store], stdin: token).status, 0)
            (status, checks) = try report()
            XCTAssertEqual(checks["apple.secret.com.example.web"], expected, "\(checks)")
            XCTAssertEqual(status, code)
        }
        let textfile = scratch.path("g.prom")
        _ = try cli.run(["health", "--store", store, "--prometheus", textfile])
        let metrics = try String(contentsOfFile: textfile, encoding: .utf8)
        XCTAssertTrue(metrics.contains("gatehouse_secret_expiry_timestamp_seconds{key_id=\"HEALTH1234\",kind=\"tracked\"}"), metrics)
        XCTAssertFalse(metrics.contains("eyJ"), "no token in the textfile")
    }

    func testLostMasterKeyIsCritical() throws {
        try FileManager.default.removeItem(atPath: store + ".key")
        let (status, checks) = try report()
        XCTAssertEqual(status, 2)
        XCTAssertEqual(checks["apple.master_key"], "critical")
        let other = CLI(environment: ["GATEHOUSE_MASTER_KEY": String(repeating: "ab", count: 32)])
        let result = try other.run(["health", "--store", store])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stdout.contains("does not open 1 sealed key(s): HEALTH1234"), result.stdout)
    }

    func testSecretSignedByARevokedKeyIsCriticalUntilUntracked() throws {
        let minted = try cli.run(["apple", "secret", "mint", "--ttl", "90d", "--store", store])
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertEqual(try cli.run(["apple", "secret", "track", "-", "--store", store], stdin: token).status, 0)
        XCTAssertEqual(try report().1["apple.secret.com.example.web"], "ok")
        // The key leaked and was revoked: the deployed secret no longer works at Apple.
        XCTAssertEqual(try cli.run(["apple", "key", "revoke", "HEALTH1234", "--store", store]).status, 1, "the active key needs --force")
        XCTAssertEqual(try cli.run(["apple", "key", "revoke", "HEALTH1234", "--force", "--store", store]).status, 0)
        var (status, checks) = try report()
        XCTAssertEqual(checks["apple.secret.com.example.web"], "critical")
        XCTAssertEqual(status, 2)
        // Untracking needs a real fingerprint prefix.
        let list = try cli.run(["apple", "secret", "list", "--json", "--store", store])
        let fingerprint = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])?.first?["fingerprint"] as? String)
        XCTAssertEqual(try cli.run(["apple", "secret", "untrack", "abc", "--store", store]).status, 1)
        XCTAssertEqual(try cli.run(["apple", "secret", "untrack", "'; DROP TABLE x; --", "--store", store]).status, 1)
        XCTAssertEqual(try cli.run(["apple", "secret", "untrack", "00000000", "--store", store]).status, 1)
        XCTAssertEqual(try cli.run(["apple", "secret", "untrack", String(fingerprint.prefix(12)), "--store", store]).status, 0)
        (status, checks) = try report()
        XCTAssertNil(checks["apple.secret.com.example.web"])
        XCTAssertEqual(try cli.run(["audit", "list", "--action", "apple.secret.untrack", "--json", "--store", store]).stdout.contains(fingerprint), true)
    }

    func testThirdLiveKeyWarns() throws {
        for id in ["SECOND1234", "THIRDK1234"] {
            let key = try AppleTools.p256Key(id, in: scratch.url.path)
            XCTAssertEqual(try cli.run(["apple", "key", "import", key, "--team-id", "TEAMID1234", "--store", store]).status, 0)
        }
        let (status, checks) = try report()
        XCTAssertEqual(checks["apple.live_keys"], "warning", "\(checks)")
        XCTAssertEqual(status, 1)
    }
}

/// Health's account-links walk on a store of 30 users with one dangling account and one recent unprovisioned user:
/// walked whole in one run, then shared by recorded runs of 4 users each (8 runs), with the same counts, and the next
/// cycle showing the last full one's findings. The walk's engine-specific windows (SQLite's ordered walk, Postgres's
/// ranges) must agree on both.
func assertAccountLinksCycle(_ cli: CLI, store: String) throws {
    func accounts(_ cli: CLI, _ extra: [String]) throws -> (dangling: [String: Any], unprovisioned: [String: Any]) {
        let result = try cli.run(["health", "--store", store, "--json", "--sweep-budget", "0"] + extra)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        let checks = object["checks"] as? [[String: Any]] ?? []
        return (try XCTUnwrap(checks.first { $0["id"] as? String == "accounts.dangling" }),
                try XCTUnwrap(checks.first { $0["id"] as? String == "accounts.unprovisioned" }))
    }
    func value(_ check: [String: Any]) -> Double? { ((check["samples"] as? [[String: Any]])?.first?["value"] as? Double) }
    let whole = try accounts(cli, [])
    XCTAssertNil(whole.dangling["carry"], "walked in one run: nothing carried")
    XCTAssertEqual(value(whole.dangling), 1)

    var windowed = cli
    windowed.environment["GATEHOUSE_TEST_HEALTH_WALK_STRIDE"] = "4"
    var runs = 0
    var last = try accounts(windowed, ["--record"])
    runs += 1
    let firstCarry = try XCTUnwrap(last.dangling["carry"] as? [String: String], "\(last.dangling)")
    XCTAssertEqual(firstCarry["cycle_users"], "4", "\(firstCarry)")
    // Not recorded: the same window again, the recorded position unmoved.
    let unrecorded = try accounts(windowed, [])
    XCTAssertEqual((unrecorded.dangling["carry"] as? [String: String])?["next"], (try accounts(windowed, []).dangling["carry"] as? [String: String])?["next"])
    while let carry = last.dangling["carry"] as? [String: String], carry["next"] != nil, runs < 50 {
        XCTAssertTrue((last.dangling["summary"] as? String ?? "").contains("so far in \(runs) run(s) of this cycle"), "\(last.dangling)")
        last = try accounts(windowed, ["--record"])
        runs += 1
    }
    XCTAssertEqual(runs, 8, "30 users, 4 a window")
    XCTAssertTrue((last.dangling["summary"] as? String ?? "").contains("a full walk of 30 users over 8 recorded runs"), "\(last.dangling)")
    XCTAssertEqual(value(last.dangling), value(whole.dangling))
    XCTAssertEqual(value(last.unprovisioned), value(whole.unprovisioned))
    XCTAssertEqual(last.unprovisioned["status"] as? String, "warning")
    XCTAssertEqual(last.unprovisioned["summary"] as? String, (whole.unprovisioned["summary"] as? String).map { $0 + " (a full walk of 30 users over 8 recorded runs)" })
    // The next cycle's runs show the last full cycle's findings until they find them again.
    let next = try accounts(windowed, ["--record"])
    XCTAssertEqual(next.dangling["status"] as? String, "warning", "\(next.dangling)")
    XCTAssertTrue((next.dangling["summary"] as? String ?? "").contains("the last full cycle took 8 runs"), "\(next.dangling)")
}
