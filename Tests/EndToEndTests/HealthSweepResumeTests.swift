import Foundation
import XCTest

/// The quick_check sweep inside a table: a store whose large tables have more rows than one range (8,192), checked
/// with a zero budget (one unit per run) by recorded runs that each resume where the last one stopped.
final class HealthSweepResumeTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("big.sqlite")
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "12000", "-q"])
        XCTAssertEqual(seeded.status, 0, seeded.all)
    }

    /// One `--json` run's store.integrity check: its status (the other checks read damaged tables too, and may not
    /// run), summary and samples by metric and table.
    private func integrity(_ extra: [String]) throws -> (status: String, summary: String, samples: [String: [String: Double]]) {
        let result = try cli.run(["health", "--store", store, "--json"] + extra)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        let check = try XCTUnwrap((object["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "store.integrity" }, result.stdout)
        var samples: [String: [String: Double]] = [:]
        for sample in check["samples"] as? [[String: Any]] ?? [] {
            let metric = sample["metric"] as? String ?? "?", table = (sample["labels"] as? [String: String])?["table"] ?? ""
            samples[metric, default: [:]][table] = sample["value"] as? Double
        }
        return (check["status"] as? String ?? "?", check["summary"] as? String ?? "", samples)
    }

    /// The rowid ranges a summary names: `user rowids 8193–end`.
    private func ranges(_ summary: String) -> [(table: String, first: Int64, last: Int64?)] {
        let pattern = try! NSRegularExpression(pattern: #"(\w+) rowids (-?\d+)–(-?\d+|end)"#)
        return pattern.matches(in: summary, range: NSRange(summary.startIndex..., in: summary)).map { match in
            let part = { (i: Int) in String(summary[Range(match.range(at: i), in: summary)!]) }
            return (part(1), Int64(part(2))!, Int64(part(3)))
        }
    }

    private func rowids(_ table: String) throws -> (low: Int64, high: Int64) {
        let line = try sqlite3(store, "SELECT min(rowid) || ' ' || max(rowid) FROM \"\(table)\";").split(separator: " ")
        return (Int64(line[0])!, Int64(line[1])!)
    }

    func testRangesResumeAcrossRunsAndCoverEveryRowOncePerCycle() throws {
        let tableCount = try XCTUnwrap(Int(try sqlite3(store, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%';")))
        var checked: [String: [(first: Int64, last: Int64?)]] = [:]
        var wholeTables: [String] = []
        var cycleStarted: [String: Double] = [:]
        var runs = 0
        var last = (status: "", summary: "", samples: [String: [String: Double]]())
        repeat {
            runs += 1
            last = try integrity(["--record", "--sweep-budget", "0"])
            XCTAssertEqual(last.status, "ok", last.summary)
            let found = ranges(last.summary)
            XCTAssertLessThanOrEqual(found.count, 1, "one unit per run: \(last.summary)")
            if let range = found.first {
                checked[range.table, default: []].append((range.first, range.last))
                if range.last != nil {
                    // Mid-cycle: no verdict yet, and where the next run resumes is recorded.
                    XCTAssertNil(last.samples["gatehouse_store_integrity_checked_timestamp_seconds"]?[range.table], last.summary)
                    XCTAssertEqual(last.samples["gatehouse_store_integrity_resume_rowid"]?[range.table], Double(range.last! + 1), last.summary)
                    let started = try XCTUnwrap(last.samples["gatehouse_store_integrity_cycle_started_timestamp_seconds"]?[range.table], last.summary)
                    XCTAssertEqual(cycleStarted[range.table] ?? started, started, "a cycle keeps its start")
                    cycleStarted[range.table] = started
                } else {
                    // The last range: the table's verdict is its cycle's start, and it no longer resumes.
                    XCTAssertEqual(last.samples["gatehouse_store_integrity_checked_timestamp_seconds"]?[range.table], cycleStarted[range.table], last.summary)
                    XCTAssertNil(last.samples["gatehouse_store_integrity_resume_rowid"]?[range.table], last.summary)
                }
            } else {
                let name = try XCTUnwrap(last.summary.components(separatedBy: "ok on ").dropFirst().first?.split(separator: " ").first, last.summary)
                wholeTables.append(String(name))
            }
            XCTAssertTrue(last.summary.contains("; a full cycle reads "), last.summary)
        } while (last.samples["gatehouse_store_integrity_checked_timestamp_seconds"]?.count ?? 0) < tableCount && runs < 200
        XCTAssertEqual(last.samples["gatehouse_store_integrity_checked_timestamp_seconds"]?.count, tableCount, "the cycle ended: \(last.summary)")
        XCTAssertTrue(last.summary.contains("every row was checked within the last "), last.summary)
        XCTAssertNotNil(last.samples["gatehouse_store_integrity_cycle_seconds"]?[""], "\(last.samples.keys)")

        // The large tables were checked range by range, from their first rowid to their end, each row once.
        XCTAssertTrue(checked.keys.contains("user") && checked.keys.contains("users"), "\(checked.keys.sorted())")
        for (table, parts) in checked {
            let (low, high) = try rowids(table)
            XCTAssertGreaterThan(high - low + 1, 8192, "\(table) is larger than one range")
            XCTAssertEqual(parts.first?.first, low, table)
            XCTAssertNil(parts.last?.last, "\(table)'s last range runs to its end")
            for (a, b) in zip(parts, parts.dropFirst()) {
                XCTAssertEqual(b.first, try XCTUnwrap(a.last) + 1, "\(table): ranges follow on with no gap or overlap: \(parts)")
            }
            XCTAssertLessThanOrEqual(try XCTUnwrap(parts.dropLast().last?.last ?? low), high, table)
        }
        // Every other table once, whole; one unit per run.
        XCTAssertEqual(Set(wholeTables).count, wholeTables.count, "each small table once per cycle: \(wholeTables)")
        XCTAssertEqual(Set(wholeTables).union(checked.keys).count, tableCount)
        XCTAssertEqual(runs, wholeTables.count + checked.values.map(\.count).reduce(0, +))

        // A run that is not recorded starts from the same place; recorded ones carry the cycle on.
        let next = try integrity(["--sweep-budget", "0"])
        XCTAssertEqual(next.status, "ok", next.summary)
        XCTAssertTrue(next.summary.contains("(1 of \(tableCount) tables this run; the others were clean in earlier runs"), next.summary)
        // The textfile says how much a cycle covers and how long it takes.
        let file = scratch.path("g.prom")
        XCTAssertEqual(try cli.run(["health", "--store", store, "--prometheus", file, "--sweep-budget", "0"]).status, 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        for metric in ["gatehouse_store_integrity_cycle_rows ", "gatehouse_store_integrity_cycle_coverage_ratio 1\n",
                       "gatehouse_store_integrity_cycle_runs ", "gatehouse_store_integrity_cycle_seconds "] {
            XCTAssertTrue(text.contains("\n" + metric), "\(metric) in:\n\(text)")
        }
        // With time enough, one run checks everything, large tables by ranges.
        let whole = try integrity(["--sweep-budget", "1m"])
        XCTAssertTrue(whole.summary.hasPrefix("PRAGMA quick_check: ok (all \(tableCount) tables and their indexes); "), whole.summary)
        XCTAssertTrue(whole.summary.contains(" by rowid ranges"), whole.summary)
    }

    func testADamagedRangeIsFoundAndFoundAgainUntilRepaired() throws {
        // A leaf page four fifths along the user table (rowids past its first range) overwritten, as in HealthCLITests.
        _ = try sqlite3(store, "PRAGMA wal_checkpoint(TRUNCATE);")
        let leaves = try sqlite3(store, "SELECT pageno FROM dbstat WHERE name = 'user' AND pagetype = 'leaf';").split(separator: "\n")
        let page = try XCTUnwrap(Int(leaves[leaves.count * 4 / 5]))
        let size = try XCTUnwrap(Int(try sqlite3(store, "PRAGMA page_size;")))
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: store))
        try handle.seek(toOffset: UInt64((page - 1) * size + 8))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 64))
        try handle.close()
        var runs = 0, userRanges = 0
        var result = (status: "", summary: "", samples: [String: [String: Double]]())
        repeat {
            runs += 1
            result = try integrity(["--record", "--sweep-budget", "0"])
            if result.status == "ok", ranges(result.summary).first?.table == "user" { userRanges += 1 }
        } while result.status == "ok" && runs < 100
        XCTAssertEqual(result.status, "critical", result.summary)
        XCTAssertGreaterThanOrEqual(userRanges, 1, "the user table's first range is clean")
        XCTAssertTrue(result.summary.hasPrefix("PRAGMA quick_check found "), result.summary)
        XCTAssertTrue(result.summary.contains("user: rowids "), result.summary)
        XCTAssertNil(result.samples["gatehouse_store_integrity_checked_timestamp_seconds"]?["user"], "no clean verdict")
        // The damaged range holds the table's place: the next runs find it again at once.
        for _ in 1...2 {
            let again = try integrity(["--record", "--sweep-budget", "0"])
            XCTAssertEqual(again.status, "critical", again.summary)
            XCTAssertTrue(again.summary.contains("user: rowids "), again.summary)
        }
        XCTAssertEqual(try integrity(["--deep"]).status, "critical")
    }

    func testAnIndexThatDisagreesWithItsTableIsFoundInRanges() throws {
        // The index's definition names another column than its entries hold, so no row is found in it by its own key:
        // quick_check does not compare an index with its table; the range check looks every row up.
        let renamed = try sqlite3(store, """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = 'CREATE INDEX "account_userId_idx" ON "account" ("accountId")' WHERE name = 'account_userId_idx';
            SELECT changes();
            """)
        XCTAssertTrue(renamed.hasSuffix("1"), renamed)
        XCTAssertEqual(try sqlite3(store, "PRAGMA quick_check('account');"), "ok", "quick_check alone does not see it")
        let result = try integrity(["--sweep-budget", "1m"])
        XCTAssertEqual(result.status, "critical", result.summary)
        XCTAssertTrue(result.summary.contains("missing from index account_userId_idx"), result.summary)
    }

    func testAnIndexOnAnExpressionIsProbedWithItsExpression() throws {
        // Gatehouse's own index on the refresh token's first 16 characters: clean, every range probes it; defined
        // over another expression than its entries hold, its missing entries are found.
        let clean = try integrity(["--sweep-budget", "1m"])
        XCTAssertEqual(clean.status, "ok", clean.summary)
        let renamed = try sqlite3(store, """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = 'CREATE INDEX gatehouse_account_refreshToken_prefix_idx ON "account" (substr("accountId", 1, 16))'
            WHERE name = 'gatehouse_account_refreshToken_prefix_idx';
            SELECT changes();
            """)
        XCTAssertTrue(renamed.hasSuffix("1"), renamed)
        let result = try integrity(["--sweep-budget", "1m"])
        XCTAssertEqual(result.status, "critical", result.summary)
        XCTAssertTrue(result.summary.contains("missing from index gatehouse_account_refreshToken_prefix_idx"), result.summary)
    }
}
