import Foundation
import XCTest

/// `gatehouse apple transfer …` against the local Apple stand-in (Tests/Fixtures/apple_server.py), which verifies each
/// client secret against the public key of the team's own key, answers Apple's errors, a rate limit and a user who
/// revoked the app. Every run is checked for what it must never print: a client secret or an access token.
final class AppleTransferTests: XCTestCase {
    static let sendingTeam = "OLDTEAM123", recipientTeam = "NEWTEAM123"
    static let sendingKey = "SENDKEY001", recipientKey = "RECVKEY001"

    /// A store on one engine with four Apple users, the sending team's key active and the recipient team's staged,
    /// and the stand-in knowing both keys' public halves.
    final class Setup {
        let scratch: Scratch
        let apple: AppleServerFixture
        let store: TestStore
        var cli = CLI()
        var outputs: [String] = []

        /// With `sharing`, a second store beside another setup's, on the same Apple stand-in and keys.
        init(_ engine: TestStore.Engine, recipientKey: Bool = true, teams: [String]? = nil, sharing other: Setup? = nil) throws {
            if let other {
                scratch = other.scratch
                apple = other.apple
            } else {
                scratch = try Scratch()
                _ = try AppleTools.p256Key(AppleTransferTests.sendingKey, in: scratch.url.path)
                _ = try AppleTools.p256Key(AppleTransferTests.recipientKey, in: scratch.url.path)
                let bindings = teams ?? ["\(AppleTransferTests.sendingKey)=\(AppleTransferTests.sendingTeam)", "\(AppleTransferTests.recipientKey)=\(AppleTransferTests.recipientTeam)"]
                apple = try AppleServerFixture(arguments: ["--keys-dir", scratch.url.path] + bindings.flatMap { ["--team", $0] })
            }
            store = try TestStore.make(engine, in: scratch, name: other == nil ? "store" : "recipient")
            cli.environment = TestStore.environment.merging(["GATEHOUSE_APPLE_BASE_URL": apple.baseURL]) { $1 }
            try run(["init"])
            try run(["providers", "set", "apple", "--team-id", AppleTransferTests.sendingTeam, "--bundle-id", "com.example.app", "--services-id", "com.example.web"])
            try run(["apple", "key", "import", scratch.path("AuthKey_\(AppleTransferTests.sendingKey).p8")])
            try run(["apple", "key", "activate", AppleTransferTests.sendingKey])
            if recipientKey {
                try run(["apple", "key", "import", scratch.path("AuthKey_\(AppleTransferTests.recipientKey).p8"), "--team-id", AppleTransferTests.recipientTeam])
            }
        }

        /// Users: uA (a relay address, Apple), uB (a real address, Apple and Google), uC (Apple; revoked the app at
        /// Apple), uD (a relay address, Apple), each with a session.
        func addUsers() throws {
            let t = "2026-01-01T00:00:00.000Z", later = "2030-01-01T00:00:00.000Z"
            let inserted = try store.query("""
                INSERT INTO "user" ("id", "name", "email", "emailVerified", "createdAt", "updatedAt") VALUES
                  ('uA', 'Ana', 'ana.relay@privaterelay.appleid.com', true, '\(t)', '\(t)'), ('uB', 'Bo', 'bo@example.com', true, '\(t)', '\(t)'),
                  ('uC', 'Cy', 'cy@example.com', true, '\(t)', '\(t)'), ('uD', 'Di', 'di.relay@privaterelay.appleid.com', true, '\(t)', '\(t)');
                INSERT INTO "account" ("id", "issuer", "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES
                  ('acA', 'https://appleid.apple.com', '000111.aaaa.0001', 'apple', 'uA', '\(t)', '\(t)'),
                  ('acB', 'https://appleid.apple.com', '000222.bbbb.0002', 'apple', 'uB', '\(t)', '\(t)'),
                  ('acG', 'https://accounts.google.com', 'g-1', 'google', 'uB', '\(t)', '\(t)'),
                  ('acC', 'https://appleid.apple.com', '000333.cccc.0003', 'apple', 'uC', '\(t)', '\(t)'),
                  ('acD', 'https://appleid.apple.com', '000444.dddd.0004', 'apple', 'uD', '\(t)', '\(t)');
                INSERT INTO "session" ("id", "expiresAt", "token", "createdAt", "updatedAt", "userId") VALUES
                  ('s1', '\(later)', 'st1', '\(t)', '\(t)', 'uA'), ('s2', '\(later)', 'st2', '\(t)', '\(t)', 'uB');
                SELECT 'ok';
                """)
            XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
            _ = try config(["revoked": ["000333.cccc.0003"], "users": ["000222.bbbb.0002": ["email": "bo@example.com", "private": false]]])
        }

        /// `count` users, each with one Apple account (sub `0007….k<N>.0001`) and a real address.
        func addAccounts(_ count: Int) throws {
            let t = "2026-01-01T00:00:00.000Z"
            let users = (0..<count).map { "('u\($0)', 'U\($0)', 'u\($0)@example.com', true, '\(t)', '\(t)')" }
            let accounts = (0..<count).map { "('k\($0)', 'u\($0)', 'https://appleid.apple.com', '0007\(String(format: "%02d", $0 % 100)).k\($0).0001', 'apple', '\(t)', '\(t)')" }
            let inserted = try store.query("""
                INSERT INTO "user" ("id", "name", "email", "emailVerified", "createdAt", "updatedAt") VALUES \(users.joined(separator: ", "));
                INSERT INTO "account" ("id", "userId", "issuer", "accountId", "providerId", "createdAt", "updatedAt") VALUES \(accounts.joined(separator: ", "));
                SELECT 'ok';
                """)
            XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
        }

        /// Better Auth's doing when uD (or the owner of `sub`) signs in during the window: a new user with the new sub
        /// and new relay address.
        func addStraggler(sub oldSub: String = "000444.dddd.0004", user: String = "uD2", account: String = "acD2") throws {
            let identity = try apple.get("/test/identity?sub=\(oldSub)&from=\(AppleTransferTests.sendingTeam)&to=\(AppleTransferTests.recipientTeam)") as? [String: Any]
            let sub = try XCTUnwrap(identity?["sub"] as? String), email = try XCTUnwrap(identity?["email"] as? String)
            let now = ISO8601DateFormatter().string(from: Date())
            let inserted = try store.query("""
                INSERT INTO "user" ("id", "name", "email", "emailVerified", "createdAt", "updatedAt") VALUES ('\(user)', 'Di', '\(email)', true, '\(now)', '\(now)');
                INSERT INTO "account" ("id", "issuer", "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES
                  ('\(account)', 'https://appleid.apple.com', '\(sub)', 'apple', '\(user)', '\(now)', '\(now)');
                SELECT 'ok';
                """)
            XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
        }

        func config(_ body: [String: Any]) throws -> Int {
            let data = try JSONSerialization.data(withJSONObject: body)
            return try AppleServerFixture.request(port: apple.port, method: "POST", path: "/test/config", body: [UInt8](data)).status
        }

        func stats() throws -> [String: Int] {
            (try apple.get("/test/stats") as? [String: Int]) ?? [:]
        }

        /// Runs `gatehouse` on the store; `status` is the exit status expected (negative: any).
        @discardableResult
        func run(_ arguments: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
            let result = try cli.run(arguments + ["--store", store.location])
            outputs.append(result.all)
            if status < 0 { return result }
            XCTAssertEqual(result.status, status, "gatehouse \(arguments.joined(separator: " ")) [\(store.engine)]: \(result.all.prefix(3000))", file: file, line: line)
            return result
        }

        func json(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
            let result = try run(arguments + ["--json"], file: file, line: line)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all, file: file, line: line)
        }

        /// No output held a JWT (a client secret) or an access token.
        func assertNoSecretPrinted(file: StaticString = #filePath, line: UInt = #line) {
            for output in outputs {
                XCTAssertNil(output.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+\."#, options: .regularExpression), output, file: file, line: line)
                XCTAssertFalse(output.contains("at_"), output, file: file, line: line)
            }
        }

        /// No output held an identifier Apple answered (personal data: Gatehouse's tables only).
        func assertNoIdentifierPrinted(_ identifiers: [String], file: StaticString = #filePath, line: UInt = #line) {
            for output in outputs {
                for identifier in identifiers where !identifier.isEmpty {
                    XCTAssertFalse(output.contains(identifier), "\(identifier) printed: \(output)", file: file, line: line)
                }
            }
        }

        /// A SQLite store's files hold no client secret (an ES256 JWT) and no access token in the clear.
        func assertNoSecretStored(file: StaticString = #filePath, line: UInt = #line) throws {
            guard store.engine == .sqlite else { return }
            for path in [store.location, store.location + "-wal"] where FileManager.default.fileExists(atPath: path) {
                let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
                XCTAssertNil(text.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+\."#, options: .regularExpression), "a JWT in \(path)", file: file, line: line)
                XCTAssertNil(text.range(of: #"(?<![A-Za-z0-9_])at_[A-Za-z0-9_-]{32}"#, options: .regularExpression), "an access token in \(path)", file: file, line: line)
            }
        }

        /// How many rows of the audit log record `action`.
        func audited(_ action: String) throws -> Int {
            Int(try store.query("SELECT count(*) FROM gatehouse_audit WHERE action = '\(action)'")) ?? -1
        }

        func sub(of account: String) throws -> String { try store.query(#"SELECT "accountId" FROM "account" WHERE "id" = '\#(account)'"#) }
        func email(of user: String) throws -> String { try store.query(#"SELECT "email" FROM "user" WHERE "id" = '\#(user)'"#) }
    }

    func yesterday() -> String { ISO8601DateFormatter().string(from: Date().addingTimeInterval(-86_400)) }

    // MARK: the whole job, on every engine

    func testTheWholeTransferOnEveryEngine() throws {
        for engine in TestStore.engines {
            let setup = try Setup(engine)
            try setup.addUsers()
            let transferredAt = yesterday()
            try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", transferredAt])
            try setup.addStraggler()
            let second = try setup.run(["apple", "transfer", "start", "--to-team", "THIRDTEAM1"], status: 1)
            XCTAssertTrue(second.stderr.contains("already open"), second.all)

            let collect = try setup.json(["apple", "transfer", "collect"])
            XCTAssertEqual(collect["asked"] as? Int, 4, "the straggler's new account is not the sending team's [\(engine)]")
            XCTAssertEqual(collect["answered"] as? Int, 3)
            XCTAssertEqual(collect["refused"] as? Int, 1)
            let exchange = try setup.run(["apple", "transfer", "exchange"])
            XCTAssertTrue(exchange.stdout.contains("3 asked, 3 answered"), exchange.all)

            let plan = try setup.run(["apple", "transfer", "plan"])
            XCTAssertTrue(plan.stdout.contains("2 account(s) to rewrite to the new sub (1 with a new relay address)"), plan.all)
            XCTAssertTrue(plan.stdout.contains("gatehouse merge plan --from uD2 --into uD --same-provider source"), plan.all)
            let status = try setup.json(["apple", "transfer", "status"])
            let planID = try XCTUnwrap((status["plan"] as? [String: Any])?["planId"] as? String)
            XCTAssertEqual(status["stage"] as? String, "applying")
            let pair = try XCTUnwrap(((status["plan"] as? [String: Any])?["stragglerPairs"] as? [[String: Any]])?.first, "\(status)")
            XCTAssertEqual([pair["userId"] as? String, pair["newUserId"] as? String, pair["keepEmail"] as? String], ["uD", "uD2", "source"],
                           "the console's link plans the merge with the CLI's decisions")

            let oldA = try setup.sub(of: "acA"), oldB = try setup.sub(of: "acB"), oldD = try setup.sub(of: "acD")
            try setup.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-7", "--yes"])
            let identity = try setup.apple.get("/test/identity?sub=000111.aaaa.0001&from=\(Self.sendingTeam)&to=\(Self.recipientTeam)") as? [String: Any]
            XCTAssertEqual(try setup.sub(of: "acA"), identity?["sub"] as? String, "[\(engine)]")
            XCTAssertEqual(try setup.email(of: "uA"), identity?["email"] as? String)
            XCTAssertNotEqual(try setup.sub(of: "acB"), oldB)
            XCTAssertEqual(try setup.email(of: "uB"), "bo@example.com", "a real address stays")
            XCTAssertEqual(try setup.sub(of: "acG"), "g-1", "another provider's account is not touched")
            XCTAssertEqual(try setup.sub(of: "acD"), oldD, "the straggler's old account is left for the merge")
            XCTAssertEqual(try setup.sub(of: "acC"), "000333.cccc.0003", "a refused account stays")
            XCTAssertEqual(try setup.store.query(#"SELECT count(*) FROM "session""#), "2", "sessions are not touched")
            XCTAssertEqual(try setup.store.query(#"SELECT DISTINCT "issuer" FROM "account" WHERE "providerId" = 'apple'"#), "https://appleid.apple.com",
                           "the issuer stays Apple's")
            XCTAssertEqual(try setup.audited("apple.transfer.apply"), 1, "the apply is audited [\(engine)]")

            let after = try setup.json(["apple", "transfer", "status"])
            XCTAssertEqual(after["stage"] as? String, "applied")
            XCTAssertEqual(after["toTeam"] as? String, Self.recipientTeam)
            let counts = try XCTUnwrap(after["counts"] as? [String: Int])
            XCTAssertEqual(counts, ["accounts": 4, "collected": 3, "exchanged": 3, "applied": 2, "failed": 1])
            let failed = try XCTUnwrap(after["failed"] as? [[String: Any]])
            XCTAssertEqual(failed.first?["userId"] as? String, "uC")
            XCTAssertEqual(failed.first?["error"] as? String, "invalid_request")
            XCTAssertEqual(after["daysLeft"] as? Int, 58)
            XCTAssertEqual((after["transferredAt"] as? String)?.prefix(19), transferredAt.prefix(19), "\(after)")

            let health = try setup.run(["health", "--json"], status: -1)
            XCTAssertTrue(health.stdout.contains("apple.transfer"), health.all)

            try setup.run(["apple", "transfer", "undo", planID, "--reason", "OPS-7 rehearsal"])
            XCTAssertEqual(try setup.sub(of: "acA"), oldA)
            XCTAssertEqual(try setup.email(of: "uA"), "ana.relay@privaterelay.appleid.com")
            XCTAssertEqual(try setup.sub(of: "acB"), oldB)
            let again = try setup.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-7", "--yes"], status: 1)
            XCTAssertTrue(again.stderr.contains("undone"), again.all)
            XCTAssertEqual(try setup.audited("apple.transfer.undo"), 1)

            // The straggler's merge, run as the plan printed it, joins the pair: uD keeps its id and data, with the
            // new sub and, as a rewrite would have given it, the new relay address.
            let printed = try XCTUnwrap(plan.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("gatehouse merge plan ") }, plan.all)
            XCTAssertEqual(printed, "gatehouse merge plan --from uD2 --into uD --same-provider source --keep-email source")
            let merge = try setup.run(printed.split(separator: " ").dropFirst().map(String.init))
            let mergePlan = try XCTUnwrap(merge.stdout.range(of: #"mp_[0-9a-f]+"#, options: .regularExpression).map { String(merge.stdout[$0]) }, merge.all)
            try setup.run(["merge", "apply", mergePlan, "--ticket", "OPS-7", "--yes"])
            let straggler = try setup.apple.get("/test/identity?sub=000444.dddd.0004&from=\(Self.sendingTeam)&to=\(Self.recipientTeam)") as? [String: Any]
            XCTAssertEqual(try setup.store.query(#"SELECT "userId" || ' ' || "accountId" FROM "account" WHERE "providerId" = 'apple' AND "userId" IN ('uD', 'uD2')"#),
                           "uD \(straggler?["sub"] as? String ?? "?")", "[\(engine)]")
            XCTAssertEqual(try setup.email(of: "uD"), straggler?["email"] as? String)
            XCTAssertEqual(try setup.store.query(#"SELECT count(*) FROM "user" WHERE "id" = 'uD2'"#), "0")
            setup.assertNoSecretPrinted()
            try setup.assertNoSecretStored()
            setup.assertNoIdentifierPrinted([identity?["sub"] as? String ?? "", identity?["email"] as? String ?? "", identity?["transfer_sub"] as? String ?? ""])
        }
    }

    // MARK: refusals

    func testStartRefusesTheSendingTeamAMissingRecipientKeyAndAClosedWindow() throws {
        let setup = try Setup(.sqlite, recipientKey: false)
        let itself = try setup.run(["apple", "transfer", "start", "--to-team", Self.sendingTeam], status: 1)
        XCTAssertTrue(itself.stderr.contains("is the sending team itself"), itself.all)
        let noKey = try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam], status: 1)
        XCTAssertTrue(noKey.stderr.contains("apple key import AuthKey_<KEYID>.p8 --team-id \(Self.recipientTeam)"), noKey.all)
        let closed = try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere", "--transferred-at", "2026-01-01"], status: 1)
        XCTAssertTrue(closed.stderr.contains("transfer the app back"), closed.all)
        let badTeam = try setup.run(["apple", "transfer", "start", "--to-team", "lower"], status: 1)
        XCTAssertTrue(badTeam.stderr.contains("Team ID"), badTeam.all)
        let badDate = try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", "yesterday"], status: 2)
        XCTAssertTrue(badDate.stderr.contains("--transferred-at"), badDate.all)
        let none = try setup.run(["apple", "transfer", "status"], status: 1)
        XCTAssertTrue(none.stderr.contains("apple transfer start"), none.all)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere"])
        let exchange = try setup.run(["apple", "transfer", "exchange"], status: 1)
        XCTAssertTrue(exchange.stderr.contains("recipient runs its own store"), exchange.all)
        let unknown = try setup.run(["apple", "transfer", "apply", "tp_nosuchplan", "--ticket", "T-1", "--yes"], status: 1)
        XCTAssertTrue(unknown.stderr.contains("no transfer plan"), unknown.all)
    }

    func testAKeyOfAnotherTeamStopsTheRunAndKeepsNothingHalfDone() throws {
        // The stand-in knows the sending key as another team's: Apple answers invalid_client to its secrets.
        let setup = try Setup(.sqlite, teams: ["\(Self.sendingKey)=OTHERTEAM1", "\(Self.recipientKey)=\(Self.recipientTeam)"])
        try setup.addUsers()
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        let collect = try setup.run(["apple", "transfer", "collect"], status: 1)
        XCTAssertTrue(collect.stderr.contains("invalid_client"), collect.all)
        XCTAssertTrue(collect.stderr.contains(Self.sendingKey), collect.all)
        let status = try setup.json(["apple", "transfer", "status"])
        XCTAssertEqual((status["counts"] as? [String: Int])?["collected"], 0)
        setup.assertNoSecretPrinted()
    }

    // MARK: the deadline

    /// `apple.transfer` warns at 21 days left and is critical at 7 while work is not applied, with the days left as a metric.
    func testHealthWarnsAt21DaysLeftAndIsCriticalAt7() throws {
        for (daysAgo, expected) in [(30, "ok"), (38, "ok"), (39, "warning"), (45, "warning"), (52, "warning"), (53, "critical"), (55, "critical")] {
            let setup = try Setup(.sqlite, recipientKey: false)
            try setup.addUsers()
            let date = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-Double(daysAgo) * 86_400 + 3600))
            try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere", "--transferred-at", date])
            let textfile = setup.scratch.path("health.prom")
            let health = try setup.run(["health", "--json", "--prometheus", textfile], status: -1)
            let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(health.stdout.utf8)) as? [String: Any], health.all)
            let check = try XCTUnwrap((report["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "apple.transfer" }, health.stdout)
            XCTAssertEqual(check["status"] as? String, expected, "\(daysAgo) days after the transfer: \(check)")
            XCTAssertTrue((check["summary"] as? String ?? "").contains("\(60 - daysAgo) day(s) left"), "\(check)")
            // The console's chart charts the same number, against the same lines.
            let gauge = try XCTUnwrap(check["gauge"] as? [String: Any], "\(check)")
            XCTAssertEqual(gauge["value"] as? Double, Double(60 - daysAgo))
            XCTAssertEqual([gauge["warning"] as? Double, gauge["critical"] as? Double], [21, 7])
            let metrics = try String(contentsOfFile: textfile, encoding: .utf8)
            XCTAssertTrue(metrics.contains("gatehouse_apple_transfer_days_left{to_team=\"\(Self.recipientTeam)\"} \(60 - daysAgo)"), metrics)
        }
        // With the work applied, 5 days before the deadline is nothing to warn about.
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        let date = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-55 * 86_400 + 3600))
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", date])
        try setup.run(["apple", "transfer", "collect"])
        try setup.run(["apple", "transfer", "exchange"])
        let planID = try XCTUnwrap(try setup.json(["apple", "transfer", "plan"])["planId"] as? String)
        try setup.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-5", "--yes"])
        let health = try setup.run(["health", "--json"], status: -1)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(health.stdout.utf8)) as? [String: Any], health.all)
        let check = try XCTUnwrap((report["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "apple.transfer" }, health.stdout)
        XCTAssertEqual(check["status"] as? String, "ok", "\(check)")
        XCTAssertTrue((check["summary"] as? String ?? "").contains("is applied"), "\(check)")

        // A sending store whose recipient runs its own store: critical 5 days before the deadline until it exports;
        // then nothing is left to do here (the recipient's store applies, and has this check), before the deadline
        // or after it.
        let sender = try Setup(.sqlite, recipientKey: false)
        try sender.addUsers()
        func transferCheck() throws -> [String: Any] {
            let health = try sender.run(["health", "--json"], status: -1)
            let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(health.stdout.utf8)) as? [String: Any], health.all)
            return try XCTUnwrap((report["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "apple.transfer" }, health.stdout)
        }
        try sender.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere", "--transferred-at", date])
        try sender.run(["apple", "transfer", "collect"])
        XCTAssertEqual(try sender.json(["apple", "transfer", "status"])["stage"] as? String, "exporting")
        XCTAssertEqual(try transferCheck()["status"] as? String, "critical")
        try sender.run(["apple", "transfer", "export", "--out", sender.scratch.path("transfer.json")])
        XCTAssertEqual(try sender.json(["apple", "transfer", "status"])["stage"] as? String, "exported")
        let exported = try transferCheck()
        XCTAssertEqual(exported["status"] as? String, "ok", "\(exported)")
        XCTAssertTrue((exported["summary"] as? String ?? "").contains("exported to the recipient's store"), "\(exported)")
        _ = try sender.store.query("UPDATE gatehouse_apple_transfers SET deadline_at = '2026-01-01T00:00:00.000Z'")
        XCTAssertEqual(try sender.json(["apple", "transfer", "status"])["stage"] as? String, "exported", "the deadline passed with nothing left to do here")
        XCTAssertEqual(try transferCheck()["status"] as? String, "ok")
    }

    // MARK: faults

    func testRateLimitsAreHonouredAndAnExpiredTokenIsFetchedAgain() throws {
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["rate_limit_every": 3, "retry_after": 1]), 200)
        let collect = try setup.json(["apple", "transfer", "collect", "--concurrency", "2"])
        XCTAssertEqual(collect["answered"] as? Int, 3)
        XCTAssertGreaterThan(collect["rateLimited"] as? Int ?? 0, 0, "\(collect)")
        XCTAssertEqual(try setup.config(["rate_limit_every": 0, "token_ttl": 1, "latency_ms": 700]), 200)
        let exchange = try setup.json(["apple", "transfer", "exchange", "--concurrency", "1"])
        XCTAssertEqual(exchange["answered"] as? Int, 3)
        XCTAssertGreaterThanOrEqual(exchange["tokenRenewals"] as? Int ?? 0, 1, "an access token Apple no longer takes is fetched again: \(exchange)")
        setup.assertNoSecretPrinted()
    }

    func testServerErrorsAreRetriedThenRecordedAsUnavailableAndAskedAgain() throws {
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["fail_every": 1]), 200)
        let failing = try setup.run(["apple", "transfer", "collect", "--json"], status: 1)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(failing.stdout.utf8)) as? [String: Any], failing.all)
        XCTAssertEqual(summary["unavailable"] as? Int, 4)
        let waiting = try setup.json(["apple", "transfer", "status"])
        XCTAssertEqual(waiting["stage"] as? String, "collecting", "accounts without a usable answer are still to collect: \(waiting)")
        XCTAssertEqual(waiting["next"] as? String, "gatehouse apple transfer collect")
        XCTAssertEqual(try setup.config(["fail_every": 0]), 200)
        let retried = try setup.json(["apple", "transfer", "collect"])
        XCTAssertEqual(retried["asked"] as? Int, 4, "what was unavailable is asked again")
        XCTAssertEqual(retried["answered"] as? Int, 3)
    }

    /// A 429's Retry-After is waited out before the next call (the stand-in counts any call that comes sooner), and
    /// one access token serves a whole run, at any concurrency.
    func testRetryAfterIsWaitedOutAndOneAccessTokenServesARun() throws {
        let setup = try Setup(.sqlite)
        try setup.addAccounts(30)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["rate_limit_every": 7, "retry_after": 1]), 200)
        let before = try setup.stats()
        let started = Date()
        let collect = try setup.json(["apple", "transfer", "collect", "--concurrency", "1"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(collect["answered"] as? Int, 30)
        let limited = collect["rateLimited"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(limited, 4, "\(collect)")
        let after = try setup.stats()
        XCTAssertEqual(after["early_requests"], 0, "no call before Retry-After passed")
        XCTAssertGreaterThanOrEqual(elapsed, Double(limited), "each 429 waited its second")
        XCTAssertEqual((after["token_requests"] ?? 0) - (before["token_requests"] ?? 0), 1, "one access token for the whole collect")
        XCTAssertEqual(try setup.config(["rate_limit_every": 0]), 200)
        let exchange = try setup.json(["apple", "transfer", "exchange", "--concurrency", "4"])
        XCTAssertEqual(exchange["answered"] as? Int, 30)
        XCTAssertEqual(exchange["tokenRenewals"] as? Int, 0)
        XCTAssertEqual((try setup.stats()["token_requests"] ?? 0) - (after["token_requests"] ?? 0), 1, "one access token for four workers")
        setup.assertNoSecretPrinted()
    }

    /// Retry-After may be an HTTP date (RFC 9110): it is waited out to that date, not read as a second.
    func testRetryAfterAsAnHTTPDateIsWaitedOut() throws {
        let setup = try Setup(.sqlite)
        try setup.addAccounts(10)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["rate_limit_every": 4, "retry_after": 3, "retry_after_date": true]), 200)
        let collect = try setup.json(["apple", "transfer", "collect", "--concurrency", "1"])
        XCTAssertEqual(collect["answered"] as? Int, 10)
        XCTAssertGreaterThanOrEqual(collect["rateLimited"] as? Int ?? 0, 2, "\(collect)")
        XCTAssertEqual(try setup.stats()["early_requests"], 0, "no call before the date Retry-After named")
    }

    /// Apple answering invalid_grant renews the access token once; invalid_grant to the new one stops the run (every
    /// other call would be refused too), keeping what was written, with no loop of renewals.
    func testInvalidGrantRenewsTheTokenOnceThenStopsTheRun() throws {
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["refuse_grants": true]), 200)
        let before = try setup.stats()
        let collect = try setup.run(["apple", "transfer", "collect", "--concurrency", "1"], status: 1)
        XCTAssertTrue(collect.stderr.contains("invalid_grant to an access token fetched just now"), collect.all)
        let after = try setup.stats()
        XCTAssertEqual((after["token_requests"] ?? 0) - (before["token_requests"] ?? 0), 2, "the first token and one renewal")
        XCTAssertEqual((after["migration_requests"] ?? 0) - (before["migration_requests"] ?? 0), 2, "one call with each token, then the run stops")
        XCTAssertEqual(try setup.config(["refuse_grants": false]), 200)
        let retried = try setup.json(["apple", "transfer", "collect"])
        XCTAssertEqual(retried["asked"] as? Int, 4, "nothing was marked refused")
        XCTAssertEqual(retried["answered"] as? Int, 3)
        setup.assertNoSecretPrinted()
    }

    /// On a terminal, collect redraws one progress line (count, rate, time left) on stderr; on a pipe it prints only
    /// the summary line.
    func testProgressOnATerminalAndASummaryLineOtherwise() throws {
        let setup = try Setup(.sqlite)
        try setup.addAccounts(40)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        XCTAssertEqual(try setup.config(["latency_ms": 40]), 200)
        let piped = try setup.run(["apple", "transfer", "collect", "--limit", "20", "--concurrency", "2"])
        XCTAssertTrue(piped.stdout.hasPrefix("collect: 20 asked, 20 answered, 0 refused, 0 unavailable, 20 still to ask;"), piped.all)
        XCTAssertFalse(piped.all.contains("\r"), "no progress line on a pipe: \(piped.all)")
        XCTAssertFalse(piped.all.contains("/s, "), piped.all)

        // script(1) gives the command a terminal; its output is the terminal's.
        let command = ([CLI.binary, "apple", "transfer", "exchange", "--concurrency", "2", "--store", setup.store.location])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "GATEHOUSE_STORE")
        environment.removeValue(forKey: "GATEHOUSE_MASTER_KEY")
        for (key, value) in setup.cli.environment { environment[key] = value }
        environment["SHELL"] = "/bin/sh"
        let terminal = try Tool.run("/usr/bin/script", ["-qfec", command, "/dev/null"], environment: environment)
        XCTAssertEqual(terminal.status, 0, terminal.all)
        XCTAssertNotNil(terminal.stdout.range(of: #"\rexchange: [0-9]+/20 accounts, [0-9]+/s, [0-9]+ s left"#, options: .regularExpression),
                        "a progress line with the count, the rate and the time left: \(terminal.all.debugDescription)")
        XCTAssertTrue(terminal.stdout.contains("exchange: 20 asked, 20 answered"), terminal.all)
        setup.outputs.append(terminal.all)
        setup.assertNoSecretPrinted()
    }

    /// Exchange, like collect, records an account Apple refuses (here a transfer identifier the recipient team does not
    /// know) and goes on; status lists it with its step, and --retry-refused asks for it again.
    func testARefusalDuringExchangeIsRecordedAndTheRunGoesOn() throws {
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        try setup.run(["apple", "transfer", "collect"])
        _ = try setup.store.query("UPDATE gatehouse_apple_transfer_accounts SET transfer_sub = '000000.unknown.0000' WHERE account_id = 'acB'")
        let exchange = try setup.json(["apple", "transfer", "exchange"])
        XCTAssertEqual([exchange["answered"] as? Int, exchange["refused"] as? Int], [2, 1], "\(exchange)")
        let status = try setup.json(["apple", "transfer", "status"])
        let failed = try XCTUnwrap(status["failed"] as? [[String: Any]])
        let refusal = try XCTUnwrap(failed.first { $0["userId"] as? String == "uB" }, "\(failed)")
        XCTAssertEqual(refusal["step"] as? String, "exchange")
        XCTAssertEqual(refusal["error"] as? String, "invalid_request")
        XCTAssertEqual((status["counts"] as? [String: Int])?["failed"], 2, "uC at collect, uB at exchange")
        XCTAssertEqual(try setup.json(["apple", "transfer", "exchange"])["asked"] as? Int, 0, "a refused account is not asked again by itself")
        XCTAssertEqual(try setup.json(["apple", "transfer", "exchange", "--retry-refused"])["asked"] as? Int, 1)
    }

    /// A collect and an exchange killed part-way lose nothing: the next run asks only for what has no answer, so
    /// at most the calls in flight and the answers of one flush interval are asked twice. On every engine.
    func testAKillDuringCollectAndExchangeLosesNothing() throws {
        for engine in TestStore.engines {
            let setup = try Setup(engine)
            try setup.addAccounts(120)
            try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
            XCTAssertEqual(try setup.config(["latency_ms": 40]), 200)
            for side in ["collect", "exchange"] {
                let before = try setup.stats()["migration_requests"] ?? 0
                let running = try setup.cli.start(["apple", "transfer", side, "--concurrency", "2", "--store", setup.store.location])
                let deadline = Date().addingTimeInterval(20)
                let column = side == "collect" ? "transfer_sub" : "new_sub"
                while Date() < deadline, (Int(try setup.store.query("SELECT count(\(column)) FROM gatehouse_apple_transfer_accounts")) ?? 0) < 30 { usleep(50_000) }
                kill(running.process.processIdentifier, SIGKILL)
                _ = try running.finish()
                let kept = Int(try setup.store.query("SELECT count(\(column)) FROM gatehouse_apple_transfer_accounts")) ?? 0
                XCTAssertGreaterThanOrEqual(kept, 30, side)
                XCTAssertLessThan(kept, 120, "the kill came part-way [\(side), \(engine)]")
                let asked = (try setup.stats()["migration_requests"] ?? 0) - before
                let rest = try setup.json(["apple", "transfer", side, "--concurrency", "2"])
                XCTAssertEqual(rest["asked"] as? Int, 120 - kept, "only what has no answer is asked again [\(side), \(engine)]")
                XCTAssertEqual(rest["remaining"] as? Int, 0)
                let total = (try setup.stats()["migration_requests"] ?? 0) - before
                XCTAssertLessThanOrEqual(total - 120, asked - kept + 2, "only the calls in flight repeat [\(side), \(engine)]")
            }
            let status = try setup.json(["apple", "transfer", "status"])
            XCTAssertEqual(status["counts"] as? [String: Int], ["accounts": 120, "collected": 120, "exchanged": 120, "applied": 0, "failed": 0])
        }
    }

    /// On D1 an apply is one guarded request per batch of accounts; a batch cut off on the wire leaves the batches
    /// before it applied and recorded, and the same command finishes the job.
    func testOnD1ACutOffApplyIsFinishedByRunningItAgain() throws {
        guard TestStore.engines.contains(.d1) else { throw XCTSkip("no D1 test server") }
        let setup = try Setup(.d1)
        try setup.addAccounts(600)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam])
        try setup.run(["apple", "transfer", "collect", "--concurrency", "8"])
        try setup.run(["apple", "transfer", "exchange", "--concurrency", "8"])
        let plan = try setup.json(["apple", "transfer", "plan"])
        let planID = try XCTUnwrap(plan["planId"] as? String)
        XCTAssertEqual(plan["rewrites"] as? Int, 600)
        // The first write goes through; the second is cut before D1 runs it.
        try D1Control.reset()
        try D1Control.fault("slow", count: 1, ["delay_ms": 1, "writes_only": true])
        try D1Control.fault("cut", count: 1, ["execute": false, "writes_only": true])
        let cut = try setup.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-3", "--yes"], status: -1)
        XCTAssertNotEqual(cut.status, 0, cut.all)
        let partial = try setup.json(["apple", "transfer", "status"])
        XCTAssertEqual((partial["counts"] as? [String: Int])?["applied"], 250, "the first batch stands, recorded")
        XCTAssertEqual((partial["plan"] as? [String: Any])?["status"] as? String, "applying")
        try D1Control.reset()
        let finished = try setup.json(["apple", "transfer", "apply", planID, "--ticket", "OPS-3", "--yes"])
        XCTAssertEqual(finished["accounts"] as? Int, 350, "only the rest is written")
        let after = try setup.json(["apple", "transfer", "status"])
        XCTAssertEqual((after["counts"] as? [String: Int])?["applied"], 600)
        XCTAssertEqual(after["stage"] as? String, "applied")
        XCTAssertEqual(try setup.store.query(#"SELECT count(*) FROM "account" WHERE "accountId" LIKE '0007%'"#), "0", "every account is on its new sub")
        try setup.run(["apple", "transfer", "undo", planID, "--reason", "OPS-3 rehearsal"])
        XCTAssertEqual(try setup.store.query(#"SELECT count(*) FROM "account" WHERE "accountId" LIKE '0007%'"#), "600")
    }

    /// Apply checks every row before it writes one: a plan gone stale (a person signed in after it was made, so
    /// Better Auth holds the new sub) changes nothing; undo refuses, changing nothing, once a rewritten account was
    /// used. On every engine.
    func testAStalePlanChangesNothingAndUndoRefusesTouchedRows() throws {
        for engine in TestStore.engines {
            let setup = try Setup(engine)
            try setup.addUsers()
            try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", yesterday()])
            try setup.run(["apple", "transfer", "collect"])
            try setup.run(["apple", "transfer", "exchange"])
            let stale = try XCTUnwrap(try setup.json(["apple", "transfer", "plan"])["planId"] as? String)
            let oldB = try setup.sub(of: "acB"), oldD = try setup.sub(of: "acD")
            try setup.addStraggler(sub: "000111.aaaa.0001", user: "uA2", account: "acA2")
            let refused = try setup.run(["apple", "transfer", "apply", stale, "--ticket", "OPS-8", "--yes"], status: 1)
            XCTAssertTrue(refused.stderr.contains("changed since the plan"), refused.all)
            XCTAssertTrue(refused.stderr.contains("nothing was changed"), refused.all)
            XCTAssertEqual([try setup.sub(of: "acB"), try setup.sub(of: "acD")], [oldB, oldD], "no row of a stale plan is written [\(engine)]")
            XCTAssertEqual(try setup.email(of: "uD"), "di.relay@privaterelay.appleid.com")
            XCTAssertEqual(try setup.audited("apple.transfer.apply"), 0)

            let plan = try setup.json(["apple", "transfer", "plan"])
            let planID = try XCTUnwrap(plan["planId"] as? String)
            XCTAssertEqual(plan["rewrites"] as? Int, 2)
            XCTAssertEqual(plan["stragglers"] as? Int, 1)
            try setup.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-8", "--yes"])
            let newB = try setup.sub(of: "acB"), newD = try setup.sub(of: "acD"), newEmail = try setup.email(of: "uD")
            XCTAssertNotEqual(newB, oldB)
            // uB signs in with the new sub: Better Auth updates the account.
            _ = try setup.store.query(#"UPDATE "account" SET "updatedAt" = '2031-01-01T00:00:00.000Z' WHERE "id" = 'acB'"#)
            let undo = try setup.run(["apple", "transfer", "undo", planID, "--reason", "OPS-8 rehearsal"], status: 1)
            XCTAssertTrue(undo.stderr.contains("touched since the apply"), undo.all)
            XCTAssertEqual([try setup.sub(of: "acB"), try setup.sub(of: "acD"), try setup.email(of: "uD")], [newB, newD, newEmail],
                           "a refused undo changes nothing [\(engine)]")
            XCTAssertEqual(try setup.json(["apple", "transfer", "status"])["stage"] as? String, "applied")
        }
    }

    // MARK: bad input

    /// A bad team, date or import file is refused with an error that names it and says what to pass instead, never a crash.
    func testBadTeamsDatesAndImportFilesAreRefusedNamingTheInputAndTheFix() throws {
        let setup = try Setup(.sqlite)
        try setup.addUsers()
        for (team, problem) in [("lower", "has 5 characters"), ("NEWTEAM1234", "has 11 characters"), ("newteam123", "lower-case"), ("NEW TEAM12", "other than")] {
            let refused = try setup.run(["apple", "transfer", "start", "--to-team", team], status: 1)
            XCTAssertTrue(refused.stderr.contains("--to-team: the Team ID"), refused.all)
            XCTAssertTrue(refused.stderr.contains(problem), refused.all)
            XCTAssertTrue(refused.stderr.contains("Membership details"), "the fix: \(refused.all)")
        }
        for date in ["2026-02-30", "2025-02-29", "2026-04-31", "2026-13-01", "12/01/2026"] {
            let refused = try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", date], status: 2)
            XCTAssertTrue(refused.stderr.contains("--transferred-at \"\(date)\" is not a date; use e.g. 2026-12-01"), refused.all)
        }
        let far = try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--transferred-at", "2099-01-01"], status: 1)
        XCTAssertTrue(far.stderr.contains("more than a year away"), far.all)
        XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_transfers"), "0", "nothing was started")

        let good: [String: Any] = ["format": "gatehouse-apple-transfer/1", "fromTeam": Self.sendingTeam, "toTeam": Self.recipientTeam,
                                   "clientId": "com.example.app", "transferredAt": yesterday(), "users": [["userId": "uA", "transferSub": "000999.abc.0001"]]]
        func file(_ name: String, _ changes: [String: Any]) throws -> String {
            let path = setup.scratch.path(name)
            try JSONSerialization.data(withJSONObject: good.merging(changes) { $1 }).write(to: URL(fileURLWithPath: path))
            return path
        }
        let cases: [(String, String)] = [
            (try file("format.json", ["format": "gatehouse-apple-transfer/9"]), "its format is \"gatehouse-apple-transfer/9\""),
            (try file("from.json", ["fromTeam": "lower"]), "fromTeam: the Team ID \"lower\" has 5 characters"),
            (try file("to.json", ["toTeam": "NEWTEAM1234"]), "toTeam: the Team ID \"NEWTEAM1234\" has 11 characters"),
            (try file("same.json", ["toTeam": Self.sendingTeam]), "are both \(Self.sendingTeam)"),
            (try file("date.json", ["transferredAt": "2026-02-30"]), "transferredAt \"2026-02-30\" is not a time"),
            (try file("client.json", ["clientId": "com example"]), "is not a valid client id"),
            (try file("entry.json", ["users": [["userId": "uA", "transferSub": "has space"]]]), "not a user id and a transfer identifier"),
        ]
        for (path, problem) in cases {
            let refused = try setup.run(["apple", "transfer", "import", path], status: 1)
            XCTAssertTrue(refused.stderr.contains("the transfer file \(path): "), refused.all)
            XCTAssertTrue(refused.stderr.contains(problem), refused.all)
            XCTAssertTrue(refused.stderr.contains("gatehouse apple transfer export --out FILE"), "the fix: \(refused.all)")
        }
        let notJSON = setup.scratch.path("truncated.json")
        try Data("{\"format\": \"gatehouse-apple-transfer/1\", \"users\": [".utf8).write(to: URL(fileURLWithPath: notJSON))
        let truncated = try setup.run(["apple", "transfer", "import", notJSON], status: 1)
        XCTAssertTrue(truncated.stderr.contains("\(notJSON) is not a transfer file"), truncated.all)
        XCTAssertTrue(truncated.stderr.contains("gatehouse apple transfer export --out FILE"), truncated.all)
        let header = #""format": "gatehouse-apple-transfer/1", "fromTeam": "OLDTEAM123", "toTeam": "NEWTEAM123", "clientId": "com.example.app", "transferredAt": "2026-12-01T00:00:00.000Z""#
        for (name, text, problem) in [
            ("trailing.json", "{\(header), \"users\": []} {}", "text follows the JSON object"),
            ("twice.json", "{\(header), \"users\": [], \"users\": []}", "\"users\" appears twice"),
            ("nousers.json", "{\(header)}", "no \"users\" array"),
            ("notarray.json", "{\(header), \"users\": 5}", "expected '['"),
            ("entry.json", "{\(header), \"users\": [{\"userId\": \"uA\"}]}", "an entry of \"users\" (among entries 1 to 1)"),
            ("bracket.json", "{\(header), \"note\": [1, 2}, \"users\": []}", "a bracket that does not match"),
            ("header.json", "{\"format\": 1, \"users\": []}", "a header field is missing or not text"),
        ] {
            let path = setup.scratch.path(name)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let refused = try setup.run(["apple", "transfer", "import", path], status: 1)
            XCTAssertTrue(refused.stderr.contains("\(path) is not a transfer file"), refused.all)
            XCTAssertTrue(refused.stderr.contains(problem), "\(name): \(refused.all)")
        }
        let folder = try setup.run(["apple", "transfer", "import", setup.scratch.url.path], status: 1)
        XCTAssertTrue(folder.stderr.contains(setup.scratch.url.path), folder.all)

        // Over the bound, refused by its size before any of it is read (a sparse file: no disk is used).
        let huge = setup.scratch.path("huge.json")
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: UInt64(1 << 30) + 1)
        try handle.close()
        let started = Date()
        let oversized = try setup.run(["apple", "transfer", "import", huge], status: 1)
        XCTAssertTrue(oversized.stderr.contains("the transfer file \(huge): it is 1073741825 bytes, over the 1024 MiB an import reads"), oversized.all)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_transfers"), "0", "nothing was imported")

        // Any valid JSON of the format reads: laid out on lines, with a member this Gatehouse does not know.
        var pretty = good
        pretty["note"] = ["nested": [1, "]", ["}"]]]
        let laidOut = setup.scratch.path("pretty.json")
        try JSONSerialization.data(withJSONObject: pretty, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: laidOut))
        let read = try setup.run(["apple", "transfer", "import", laidOut])
        XCTAssertTrue(read.stdout.contains("imported 1 user(s)"), read.all)
    }

    // MARK: a recipient with its own store

    func testExportCarriesOnlyUserIdsAndTransferIdentifiersAndTheRecipientFinishesTheJob() throws {
        let sender = try Setup(.sqlite)
        try sender.addUsers()
        try sender.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere"])
        try sender.run(["apple", "transfer", "collect"])
        let file = sender.scratch.path("transfer.json")
        try sender.run(["apple", "transfer", "export", "--out", file])
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertFalse(text.contains("000111.aaaa.0001"), "no team-scoped sub leaves the sending team")
        XCTAssertFalse(text.contains("privaterelay"), "no relay address leaves the sending team")
        let exported = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let users = try XCTUnwrap(exported["users"] as? [[String: String]])
        XCTAssertEqual(users.count, 3)
        XCTAssertEqual(Set(users.flatMap(\.keys)), ["userId", "transferSub"])

        // The recipient: the same users and accounts (the app's own copy), its own key active.
        let recipient = try Setup(.sqlite, sharing: sender)
        try recipient.addUsers()
        try recipient.run(["apple", "key", "activate", Self.recipientKey])
        let imported = try recipient.run(["apple", "transfer", "import", file])
        XCTAssertTrue(imported.stdout.contains("imported 3 user(s)"), imported.all)
        let exchange = try recipient.run(["apple", "transfer", "exchange"])
        XCTAssertTrue(exchange.stdout.contains("3 asked, 3 answered"), exchange.all)
        try recipient.run(["apple", "transfer", "plan"])
        let planID = try XCTUnwrap(((try recipient.json(["apple", "transfer", "status"]))["plan"] as? [String: Any])?["planId"] as? String)
        try recipient.run(["apple", "transfer", "apply", planID, "--ticket", "OPS-9", "--yes"])
        XCTAssertNotEqual(try recipient.sub(of: "acA"), "000111.aaaa.0001")
        XCTAssertEqual(try sender.sub(of: "acA"), "000111.aaaa.0001", "the sender's store is not the one rewritten")
        let bad = recipient.scratch.path("bad.json")
        try "{\"format\": \"x\"}".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try recipient.run(["apple", "transfer", "import", bad], status: 1)
        XCTAssertTrue(refused.stderr.contains("not a transfer file"), refused.all)
    }

    /// Export writes page by page, and import decodes its file a batch at a time: their memory does not grow with the
    /// users as it did (at 300,000 users: export 282 MB when it held them all, 36 MB streamed; import 134 MB
    /// decoding the whole file, 68 MB). A user with two collected accounts is written once.
    func testExportAndImportKeepMemoryFlatAndWriteEachUserOnce() throws {
        let setup = try Setup(.sqlite)
        try setup.run(["apple", "transfer", "start", "--to-team", Self.recipientTeam, "--recipient-elsewhere"])
        let count = 200_000, t = "2026-01-01T00:00:00.000Z"
        let filled = try setup.store.query("""
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(count - 1))
            INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) SELECT 'u' || i, 'U', 'u' || i || '@example.com', 1, '\(t)', '\(t)' FROM n;
            INSERT INTO gatehouse_apple_transfer_accounts (transfer_id, account_id, user_id, old_sub, transfer_sub, updated_at)
              SELECT 1, 'k' || id, id, printf('%06d.old.0001', rowid), printf('%06d.transfer.0001', rowid), '\(t)' FROM "user";
            INSERT INTO gatehouse_apple_transfer_accounts (transfer_id, account_id, user_id, old_sub, transfer_sub, updated_at)
              VALUES (1, 'k0-second', 'u0', 'second.old.0001', 'second.transfer.0001', '\(t)');
            SELECT 'ok';
            """)
        XCTAssertTrue(filled.hasSuffix("ok"), filled)
        let file = setup.scratch.path("transfer.json")
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in setup.cli.environment { environment[key] = value }
        let timed = try Tool.run("/usr/bin/time", ["-f", "peak %M KB", CLI.binary, "apple", "transfer", "export", "--out", file, "--store", setup.store.location],
                                 environment: environment)
        XCTAssertEqual(timed.status, 0, timed.all)
        XCTAssertTrue(timed.stdout.contains("wrote \(count) user id(s)"), timed.all)
        let peak = try XCTUnwrap(timed.stderr.range(of: #"peak [0-9]+ KB"#, options: .regularExpression).flatMap { Int(timed.stderr[$0].split(separator: " ")[1]) }, timed.all)
        XCTAssertLessThan(peak, 64 * 1024, "export's peak memory at \(count) users, KB")
        let exported = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        let users = try XCTUnwrap(exported["users"] as? [[String: String]])
        XCTAssertEqual(users.count, count)
        XCTAssertEqual(Set(users.map { $0["userId"] ?? "" }).count, count, "each user once")
        XCTAssertEqual(users.first { $0["userId"] == "u0" }?["transferSub"], "second.transfer.0001", "a user's first account (account id order: k0-second before ku0)")
        XCTAssertEqual(exported["format"] as? String, "gatehouse-apple-transfer/1")
        XCTAssertEqual(exported["toTeam"] as? String, Self.recipientTeam)

        let recipient = try Setup(.sqlite, sharing: setup)
        let imported = try Tool.run("/usr/bin/time", ["-f", "peak %M KB", CLI.binary, "apple", "transfer", "import", file, "--store", recipient.store.location],
                                    environment: environment)
        XCTAssertEqual(imported.status, 0, imported.all)
        XCTAssertTrue(imported.stdout.contains("imported \(count) user(s)"), imported.all)
        let importPeak = try XCTUnwrap(imported.stderr.range(of: #"peak [0-9]+ KB"#, options: .regularExpression).flatMap { Int(imported.stderr[$0].split(separator: " ")[1]) }, imported.all)
        XCTAssertLessThan(importPeak, 80 * 1024, "import's peak memory at \(count) users, KB")
    }

    // MARK: identity tokens

    func testTokenInspectExplainsATransferSubClaim() throws {
        func part(_ object: [String: Any]) throws -> String {
            try JSONSerialization.data(withJSONObject: object).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let now = Int(Date().timeIntervalSince1970)
        let header = try part(["alg": "RS256", "kid": "K1"])
        let token = try header + "." + part([
            "iss": "https://appleid.apple.com", "aud": "com.example.app", "sub": "001234.newteam.0001", "transfer_sub": "000999.bridge.0001",
            "email": "x@privaterelay.appleid.com", "email_verified": true, "iat": now, "exp": now + 600,
        ]) + ".c2ln"
        let setup = try Setup(.sqlite)
        let result = try setup.run(["token", "inspect", token, "--provider", "apple"], status: -1)
        XCTAssertTrue(result.stdout.contains("transfer_sub is 000999.bridge.0001"), result.all)
        XCTAssertTrue(result.stdout.contains("apple transfer status"), result.all)
    }
}
