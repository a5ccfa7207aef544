@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `users duplicates` in bounded memory (`SplitIdentityScan`) gives the report an in-memory scan
/// (`SplitIdentityReference`, the test oracle) gives, field for field and byte for byte as JSON, on a store of tricky data, on every
/// engine, whether its sorters stay in memory or spill runs to a temporary file.
final class SplitIdentityEquivalenceTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    let anchor = Timestamp(iso8601: "2026-01-01T00:00:00Z")!

    func testTheStreamingScanFindsTheReferencePairsOnSQLite() throws {
        let (store, _) = try Store.initialize(path: scratch.path("tricky.sqlite"), actor: tester)
        try fillWithTrickyData(store)
        try assertSameReports(store)
    }

    func testTheStreamingScanFindsTheReferencePairsOnPostgres() throws {
        let database = try PostgresTestDatabase.make("gh_dups")
        defer { database.drop() }
        let (store, _) = try Store.initialize(path: database.uri, actor: tester)
        try fillWithTrickyData(store)
        try assertSameReports(store)
    }

    /// On D1 the scans page through the tables a request at a time: the same rows, copied from a SQLite store.
    func testTheStreamingScanFindsTheReferencePairsOnD1() throws {
        let path = scratch.path("tricky-d1.sqlite")
        let (sqlite, _) = try Store.initialize(path: path, actor: tester)
        try fillWithTrickyData(sqlite)
        try assertSameReports(try D1TestDatabase.copy(of: path))
    }

    /// The oracle lives with the tests: no product source declares or calls it.
    func testTheReferenceScanIsNotInTheProduct() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        XCTAssertGreaterThan(files.count, 100)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            XCTAssertFalse(text.contains("enum SplitIdentityReference") || text.contains("SplitIdentityReference.run"), file.path)
        }
    }

    /// The streaming scan with its sorters' budget, or the reference.
    private enum Scan { case streaming(sorterBudget: Int), reference }

    /// Every pair a scan finds, best first, and its counts.
    private func scan(_ store: Store, minPoints: Int, windowDays: Int, _ scan: Scan) throws -> ([Int], [ScoredPair]) {
        try store.db.read {
            let merged = try MergeLedger.mergedUserIDs(store.db), windowMs = Int64(windowDays) * 86_400_000
            let result = switch scan {
            case .streaming(let budget): try SplitIdentityScan(store: store, merged: merged, windowMs: windowMs, minPoints: minPoints, sorterBudget: budget).run()
            case .reference: try SplitIdentityReference.run(store, merged: merged, windowMs: windowMs, minPoints: minPoints)
            }
            var pairs: [ScoredPair] = []
            while let pair = try result.nextPair() { pairs.append(pair) }
            XCTAssertEqual(pairs.count, result.pairsFound)
            return ([result.usersScanned, result.sessionsScanned, result.nameGroups, result.pairsScored, result.pairsFound, result.excluded], pairs)
        }
    }

    /// Every threshold band (below, at and above the dense-pair bound of 0.60) and three windows, sorters in memory
    /// and spilling (the smallest budget writes dozens of runs): every pair, in order, and every count; then whole
    /// reports (the best pairs explained) as the CLI and the console get them.
    private func assertSameReports(_ store: Store, file: StaticString = #filePath, line: UInt = #line) throws {
        let u = store.schema.user, dialect = store.db.dialect
        let busy = Set(try store.db.rows("SELECT \(dialect.rowLocatorColumn) FROM \(u.sql) WHERE \(u.col(.id)) IN ('busy-a', 'busy-b')").compactMap { dialect.rowLocator($0[0]) })
        XCTAssertEqual(busy.count, 2)
        for minPoints in [30, 45, 55, 60, 61, 70, 85, 100] {
            for windowDays in [1, 30, 400] {
                let reference = try scan(store, minPoints: minPoints, windowDays: windowDays, .reference)
                XCTAssertEqual(reference.0[5], 2, "merged users left out", file: file, line: line)
                if minPoints <= 60 && windowDays == 30 {
                    // Found twice, by the name pass (an IP shared after 64 sessions) and by the mailbox pass.
                    XCTAssertEqual(reference.1.filter { Set([$0.firstRowid, $0.secondRowid]) == busy }.count, 2, "min \(minPoints)", file: file, line: line)
                }
                for budget in [SplitIdentityScan.defaultSorterBudget, 1 << 16] {
                    let streamed = try scan(store, minPoints: minPoints, windowDays: windowDays, .streaming(sorterBudget: budget))
                    XCTAssertEqual(streamed.0, reference.0, "counts, min \(minPoints), window \(windowDays), budget \(budget)", file: file, line: line)
                    XCTAssertEqual(streamed.1, reference.1, "pairs, min \(minPoints), window \(windowDays), budget \(budget)", file: file, line: line)
                }
            }
        }
        let finder = SplitIdentityFinder(store: store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var codes = Set<String>(), sawCut = false
        for (minPoints, windowDays, limit) in [(50, 30, 300), (61, 400, 7), (70, 30, 300), (70, 1, 50), (85, 30, 300)] {
            let reference = try finder.find(minPoints: minPoints, limit: limit, windowDays: windowDays) { merged, windowMs in
                try SplitIdentityReference.run(store, merged: merged, windowMs: windowMs, minPoints: minPoints)
            }
            let streamed = try finder.find(minPoints: minPoints, limit: limit, windowDays: windowDays, sorterBudget: 1 << 16)
            XCTAssertEqual(streamed, reference, "min \(minPoints), window \(windowDays), limit \(limit)", file: file, line: line)
            XCTAssertEqual(try encoder.encode(streamed), try encoder.encode(reference), file: file, line: line)
            codes.formUnion(reference.candidates.flatMap { $0.reasons.map(\.code) })
            sawCut = sawCut || reference.pairsFound > reference.candidates.count
        }
        // The data exercises what it is meant to (else the comparison proves little).
        XCTAssertTrue(codes.isSuperset(of: ["same_email_unicode", "same_mailbox", "shared_ip", "relay_pair", "name_match", "created_close"]), "\(codes)", file: file, line: line)
        XCTAssertTrue(sawCut, "no report cut by its limit", file: file, line: line)
    }

    /// A seeded population (common names of 30 to 60 users, relays, split identities) plus hand-made rows.
    private func fillWithTrickyData(_ store: Store) throws {
        _ = try DemoSeeder(seed: 29, anchor: anchor).seed(store, users: 2500)
        let db = store.db, u = store.schema.user, s = store.schema.session
        let created = u.encoding(.createdAt), sessionDates = s.encoding(.createdAt)
        var sessionNumber = 0
        func user(_ id: String, _ name: String?, _ email: String, _ time: Timestamp) throws {
            do { try insertUser(id, name, email, time) } catch { XCTFail("user \(id) \(email.debugDescription)"); throw error }
        }
        func insertUser(_ id: String, _ name: String?, _ email: String, _ time: Timestamp) throws {
            try db.execute("""
                INSERT INTO \(u.sql) (\(u.col(.id)), \(u.col(.name)), \(u.col(.email)), \(u.col(.emailVerified)), \(u.col(.createdAt)), \(u.col(.updatedAt)))
                VALUES (?, ?, ?, ?, ?, ?)
                """, [.text(id), name.map(SQLValue.text) ?? .null, .text(email), .integer(1), created.encode(time), created.encode(time)])
        }
        func session(_ userID: String, _ ip: String?, _ agent: String? = "UA-1") throws {
            sessionNumber += 1
            let time = Timestamp(milliseconds: anchor.milliseconds - Int64(sessionNumber) * 1000)
            try db.execute("""
                INSERT INTO \(s.sql) (\(s.col(.id)), \(s.col(.expiresAt)), \(s.col(.token)), \(s.col(.createdAt)), \(s.col(.updatedAt)), \(s.col(.ipAddress)), \(s.col(.userAgent)), \(s.col(.userId)))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text("tricky-s\(sessionNumber)"), sessionDates.encode(anchor.adding(seconds: 86_400)), .text("tricky-t\(sessionNumber)"),
                      sessionDates.encode(time), sessionDates.encode(time), ip.map(SQLValue.text) ?? .null, agent.map(SQLValue.text) ?? .null, .text(userID)])
        }
        func day(_ n: Int64) -> Timestamp { Timestamp(milliseconds: anchor.milliseconds - 400 * 86_400_000 + n * 86_400_000) }
        try db.write {
            // Unicode emails as Better Auth stores them (JavaScript's toLowerCase, no normalisation): é composed and
            // decomposed, final sigma, dotted İ, ß; the same name or not.
            let lower = JavaScriptString.toLowerCase
            try user("uni-1", "José Núñez", lower("José.Núñez@Example.com"), day(10))
            try user("uni-2", "José Núñez", lower("Jose\u{301}.Nu\u{301}n\u{303}ez@Example.com"), day(12))
            try user("uni-3", "Someone Else", "JOSÉ.NÚÑEZ@example.org", day(200)) // a legacy row, not lowercased
            try user("uni-4", "Ὀδυσσεύς", lower("ὈΔΥΣΣΕΎΣ@example.gr"), day(50))
            try user("uni-5", "Odysseus", lower("ὈΔΥΣΣΕΎΣ@example.gr").decomposedStringWithCanonicalMapping, day(300))
            try user("uni-6", "İlkay Gündoğan", lower("İlkay@example.de"), day(20))
            try user("uni-7", "Ilkay Gundogan", "İlkay@example.de", day(21)) // a legacy row: lowercased, the same code units as uni-6
            try user("uni-8", "Straße", "strasse@example.de", day(22))
            try user("uni-9", "STRASSE", lower("Straße@example.de"), day(23))
            // Case variants of one mailbox at other domains (and a +tag), legacy rows not lowercased.
            try user("case-1", "Ana Costa", "Ana.Costa@Gmail.com", day(100))
            try user("case-2", "ana costa", "ana.costa+news@outlook.com", day(103))
            try user("case-3", "A. Costa", "ANA.COSTA@proton.me", day(380))
            // Relays on both of Apple's domains next to real addresses.
            try user("relay-1", "Kenji Sato", "x7k2m9q1zz@privaterelay.appleid.com", day(40))
            try user("relay-2", "Kenji Sato", "kenji.sato@gmail.com", day(45))
            try user("relay-3", "Kenji Sato", "abcdefgh12@private.icloud.com", day(46))
            try user("relay-4", "kenji  SATO", "K.Sato@icloud.com", day(90))
            // An empty name, a name with no letters, an email without @, a short mailbox.
            try user("odd-1", "", "noname@example.com", day(5))
            try user("odd-2", "---", "noname@example.org", day(6))
            try user("odd-3", "  ", "not-an-email", day(7))
            try user("odd-4", "Jo", "jo@example.com", day(8))
            try user("odd-5", "Jo", "jo@example.net", day(8))
            // A generic mailbox at 25 domains (more than 20: not evidence), and one at exactly 20.
            for n in 0..<25 { try user("info-\(n)", "Info Desk \(n)", "info@domain\(n).example", day(Int64(n))) }
            for n in 0..<20 { try user("team-\(n)", "Team \(n)", "team.mail@place\(n).example", day(Int64(n * 20))) }
            // Many users in one group: 300 spellings of one name, created in bursts, behind NATs of different sizes.
            let spellings = ["María García", "maria garcia", "MARIA GARCÍA", "María-García", "Maria  García", "maría garcía."]
            for n in 0..<300 {
                let id = "big-\(n)"
                try user(id, spellings[n % spellings.count], n % 7 == 0 ? "r\(n)abcdef@privaterelay.appleid.com" : "maria.garcia.\(n)@gmail.com",
                         day(Int64((n * 37) % 390)))
                try session(id, n % 3 == 0 ? "10.0.0.\(n % 9)" : "203.0.113.\(n)", n % 2 == 0 ? "UA-1" : "UA-2") // NATs of ~33 users
                if n % 10 == 0 { try session(id, "198.51.100.1") } // one NAT of 30
                if n % 4 == 0 { try session(id, "192.0.2.1") } // one of 75: a carrier, not evidence
                if n % 50 == 0 { try session(id, nil, nil) }
            }
            // Two users of a common name a year apart whose only shared IP is in the 65th session and later; one mailbox.
            try user("busy-a", "María García", "busy.a@gmail.com", day(0))
            try user("busy-b", "maria garcia", "busy.a@outlook.com", day(390))
            for n in 0..<70 { try session("busy-a", "100.64.\(n / 250).\(n % 250)") }
            for n in 0..<64 { try session("busy-b", "100.65.\(n / 250).\(n % 250)") }
            try session("busy-b", "100.64.0.66")
            try session("busy-b", "100.64.0.1")
            // Unreadable creation times count as never close (SQLite only: Postgres's column takes only times).
            if db.dialect.engine == .sqlite {
                try db.execute("INSERT INTO \(u.sql) (\(u.col(.id)), \(u.col(.name)), \(u.col(.email)), \(u.col(.emailVerified)), \(u.col(.createdAt)), \(u.col(.updatedAt))) VALUES ('when-1', 'Kenji Sato', 'when1@example.com', 1, 'soon', 'soon')")
                try session("when-1", "10.0.0.1")
            }
        }
        // Two users in an applied merge: left out.
        try recordMerge(db, source: "relay-3", target: "case-3")
    }
}
