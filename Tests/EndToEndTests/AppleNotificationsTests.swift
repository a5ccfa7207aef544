import Foundation
import HTTPTestSupport
import XCTest

/// `gatehouse apple notifications serve | ingest | list` against a local appleid.apple.com (Tests/Fixtures/apple_server.py)
/// whose key signs the notifications, on every engine the run has.
final class AppleNotificationsTests: XCTestCase {
    /// The listener over a real socket with Apple's body shape: valid, duplicate, wrong aud, expired, bad signature,
    /// events as an object, oversized, garbage, GET, another path.
    func testListenerVerifiesRecordsOnceAndRefusesTheRest() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple)
            defer { setup.store.drop() }

            let listener = try setup.cli.start(["apple", "notifications", "serve", "--listen", "127.0.0.1:0", "--store", setup.store.location])
            defer { listener.process.terminate(); listener.process.waitUntilExit() }
            let line = try XCTUnwrap(try AppleServerFixture.waitForLine(in: listener, prefix: "listener on http://"), "\(engine): the listener did not start")
            let address = try XCTUnwrap(line.components(separatedBy: "listener on http://127.0.0.1:").last)
            let port = try XCTUnwrap(UInt16(address.prefix { $0.isNumber }))
            func post(_ body: String, path: String = "/") throws -> RawResponse {
                try AppleServerFixture.request(port: port, method: "POST", path: path, body: Array(body.utf8))
            }

            let valid = try apple.notification(type: "email-disabled", sub: "001234.apple", jti: "jti-1", email: "ana@privaterelay.appleid.com")
            XCTAssertEqual(try post(valid.body).status, 200, "\(engine): a valid notification")
            XCTAssertEqual(try post(valid.body).status, 200, "\(engine): a duplicate is answered 200 too")
            let wrongAud = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "jti-2", aud: "com.other.app")
            let wrongAudAnswer = try post(wrongAud.body)
            XCTAssertEqual(wrongAudAnswer.status, 400)
            XCTAssertTrue(wrongAudAnswer.bodyText.contains("aud"), wrongAudAnswer.bodyText)
            let now = Int(Date().timeIntervalSince1970)
            let expired = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "jti-3", iat: now - 7200, exp: now - 3600)
            XCTAssertEqual(try post(expired.body).status, 400)
            let future = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "jti-3f", iat: now + 3600, exp: now + 7200)
            XCTAssertEqual(try post(future.body).status, 400)
            let forged = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "jti-4", key: "other")
            XCTAssertEqual(try post(forged.body).status, 400)
            let object = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "jti-5", eventsAsObject: true)
            let objectAnswer = try post(object.body)
            XCTAssertEqual(objectAnswer.status, 400)
            XCTAssertTrue(objectAnswer.bodyText.contains("events is a JSON object"), objectAnswer.bodyText)
            XCTAssertEqual(try post(String(repeating: "a", count: 40_000)).status, 413)
            XCTAssertEqual(try post("garbage \u{0}\u{1} {{{").status, 400)
            XCTAssertEqual(try post("{\"payload\": 12}").status, 400)
            XCTAssertEqual(try AppleServerFixture.request(port: port, method: "GET", path: "/").status, 405)
            XCTAssertEqual(try post(valid.body, path: "/other").status, 404)
            XCTAssertEqual(try AppleServerFixture.request(port: port, method: "GET", path: "/../../etc/passwd").status, 404)

            // Recorded once, the refused ones with why; the forwarding state shows on the user.
            let list = try setup.run(["apple", "notifications", "list", "--json"])
            let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            XCTAssertEqual(entries.filter { $0["outcome"] as? String == "accepted" }.count, 1, "\(engine): \(list.stdout)")
            XCTAssertEqual(entries.filter { $0["outcome"] as? String == "refused" }.count, 5, "\(engine): \(list.stdout)")
            XCTAssertTrue(entries.contains { ($0["reason"] as? String)?.contains("expired") == true })
            XCTAssertTrue(entries.contains { ($0["reason"] as? String)?.contains("signed by Apple's keys") == true })
            let user = try setup.run(["users", "show", "uA", "--json"])
            XCTAssertTrue(user.stdout.contains("apple_email_forwarding_off"), user.stdout)
            XCTAssertTrue(try setup.run(["users", "show", "uA"]).stdout.contains("email forwarding off"))
            let audit = try setup.run(["audit", "list", "--json", "--limit", "100"])
            XCTAssertTrue(audit.stdout.contains("apple.notification.email-disabled"), audit.stdout)
            XCTAssertEqual(audit.stdout.components(separatedBy: "apple.notification.").count - 1, 1, "\(engine): one audit entry for one notification")

            // No token anywhere: the list, the audit log, the listener's log, the store.
            listener.process.terminate()
            listener.process.waitUntilExit()
            let listenerOutput = (try? String(contentsOf: listener.out, encoding: .utf8)) ?? ""
            for token in [valid.token, wrongAud.token, expired.token, forged.token, object.token] {
                for text in [list.stdout, audit.stdout, user.stdout, listenerOutput] {
                    XCTAssertFalse(text.contains(token), "\(engine): a notification token was shown")
                }
            }
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_notifications WHERE reason LIKE '%eyJ%' OR action LIKE '%eyJ%'"), "0")
        }
    }

    /// consent-revoked ends the sessions (all of them; Apple-only user) and marks the account revoked; account-delete
    /// opens a deletion request and deletes nothing; an unknown sub is recorded and changes nothing. Through `ingest`.
    func testIngestActsOnConsentRevokedAccountDeleteAndUnknownSub() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple)
            defer { setup.store.drop() }

            let revoked = try apple.notification(type: "consent-revoked", sub: "001234.apple", jti: "c-1")
            let file = scratch.path("body.json")
            try revoked.body.write(toFile: file, atomically: true, encoding: .utf8)
            let first = try setup.run(["apple", "notifications", "ingest", file])
            XCTAssertTrue(first.stdout.contains("accepted") && first.stdout.contains("2 session(s) ended"), first.stdout)
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"session\" WHERE \"userId\" = 'uA'"), "0")
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"session\" WHERE \"userId\" = 'uB'"), "1", "\(engine): another user's sessions stay")
            let again = try setup.run(["apple", "notifications", "ingest", "-"], stdin: revoked.body)
            XCTAssertTrue(again.stdout.hasPrefix("duplicate"), again.stdout)
            let shown = try setup.run(["users", "show", "uA"]).stdout
            XCTAssertTrue(shown.contains("Apple consent revoked") && shown.contains("next Sign in with Apple"), shown)

            // A user with Google too: all sessions end, and the audit entry says why.
            let mixed = try apple.notification(type: "consent-revoked", sub: "005678.apple", jti: "c-2")
            let mixedResult = try setup.run(["apple", "notifications", "ingest", "-", "--json"], stdin: mixed.body)
            XCTAssertTrue(mixedResult.stdout.contains("do not say which sign-in"), mixedResult.stdout)
            XCTAssertTrue(try setup.run(["audit", "list", "--json"]).stdout.contains("unattributable_all_ended"))

            let deleted = try apple.notification(type: "account-deleted", sub: "001234.apple", jti: "d-1")
            let deletion = try setup.run(["apple", "notifications", "ingest", "-"], stdin: deleted.body)
            XCTAssertTrue(deletion.stdout.contains("deletion request"), deletion.stdout)
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"user\" WHERE \"id\" = 'uA'"), "1", "\(engine): never deleted automatically")
            XCTAssertEqual(try setup.store.query("SELECT state FROM gatehouse_apple_deletion_requests WHERE user_id = 'uA'"), "open")
            XCTAssertTrue(try setup.run(["users", "show", "uA", "--json"]).stdout.contains("apple_deletion_requested"))

            let before = try setup.store.query("SELECT count(*) FROM \"session\"")
            let unknown = try apple.notification(type: "consent-revoked", sub: "999999.nobody", jti: "u-1")
            let unknownResult = try setup.run(["apple", "notifications", "ingest", "-"], stdin: unknown.body)
            XCTAssertTrue(unknownResult.stdout.hasPrefix("unknown_sub"), unknownResult.stdout)
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"session\""), before)

            let bad = try apple.notification(type: "consent-revoked", sub: "005678.apple", jti: "b-1", aud: "com.other")
            let refused = try setup.run(["apple", "notifications", "ingest", "-"], status: 1, stdin: bad.body)
            XCTAssertTrue(refused.stdout.contains("refused") && !refused.all.contains(bad.token), refused.all)
        }
    }

    /// Apple's keys are fetched once and kept for the answer's max-age, across processes (the store keeps them);
    /// `--jwks FILE` reads them without a fetch; keys that cannot be had refuse the notification, changing nothing.
    func testKeysAreCachedByMaxAgeOrReadFromAFile() throws {
        let scratch = try Scratch()
        let apple = try AppleServerFixture(maxAge: 600)
        let setup = try AppleLifecycleStore(.sqlite, scratch: scratch, apple: apple)
        for (index, type) in ["email-disabled", "email-enabled", "consent-revoked"].enumerated() {
            try setup.run(["apple", "notifications", "ingest", "-"], stdin: try apple.notification(type: type, sub: "001234.apple", jti: "k-\(index)").body)
        }
        XCTAssertEqual((try apple.get("/test/stats") as? [String: Any])?["key_fetches"] as? Int, 1)

        let jwks = scratch.path("keys.json")
        let keys = try AppleServerFixture.request(port: apple.port, method: "GET", path: "/auth/keys")
        try Data(keys.body).write(to: URL(fileURLWithPath: jwks))
        let unreachable = ["GATEHOUSE_APPLE_BASE_URL": "http://127.0.0.1:1"]
        try setup.run(["apple", "notifications", "ingest", "-", "--jwks", jwks], environment: unreachable,
                      stdin: try apple.notification(type: "email-disabled", sub: "005678.apple", jti: "f-1").body)

        let freshScratch = try Scratch()
        let fresh = try AppleLifecycleStore(.sqlite, scratch: freshScratch, apple: apple)
        let failed = try fresh.run(["apple", "notifications", "ingest", "-"], status: 1, environment: unreachable,
                                   stdin: try apple.notification(type: "consent-revoked", sub: "001234.apple", jti: "f-2").body)
        XCTAssertTrue(failed.stdout.contains("keys could not be fetched") && failed.stdout.contains("connection refused"), failed.stdout)
        XCTAssertEqual(try fresh.store.query("SELECT count(*) FROM \"session\" WHERE \"userId\" = 'uA'"), "2")
    }

    /// The same notification POSTed eight times at once is recorded once and answered 200 every time; a token naming
    /// a key Apple's set lacks makes one fresh fetch, and when that fails the listener answers 503 (Apple retries) and
    /// changes nothing.
    func testConcurrentDuplicatesAreRecordedOnceAndMissingKeysAnswer503() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple)
            defer { setup.store.drop() }
            let listener = try setup.cli.start(["apple", "notifications", "serve", "--listen", "127.0.0.1:0", "--path", "/apple/notifications",
                                                "--quiet", "--store", setup.store.location])
            defer { listener.process.terminate(); listener.process.waitUntilExit() }
            let line = try XCTUnwrap(try AppleServerFixture.waitForLine(in: listener, prefix: "listener on http://"))
            let port = try XCTUnwrap(UInt16(try XCTUnwrap(line.components(separatedBy: "listener on http://127.0.0.1:").last).prefix { $0.isNumber }))

            let body = Array(try apple.notification(type: "consent-revoked", sub: "001234.apple", jti: "same").body.utf8)
            let statuses = Collected<Int>()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let status = (try? AppleServerFixture.request(port: port, method: "POST", path: "/apple/notifications", body: body).status) ?? -1
                statuses.append(status)
            }
            XCTAssertEqual(statuses.values, Array(repeating: 200, count: 8), "\(engine)")
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_notifications WHERE jti = 'same'"), "1", "\(engine)")
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_audit WHERE action = 'apple.notification.consent-revoked'"), "1")

            _ = try AppleServerFixture.request(port: apple.port, method: "POST", path: "/test/keys", body: Array(#"{"status": 500}"#.utf8))
            let rotated = (body: try apple.signed(kid: "ROTATED001", type: "email-disabled", sub: "001234.apple", jti: "rotated"), token: "")
            let answer = try AppleServerFixture.request(port: port, method: "POST", path: "/apple/notifications", body: Array(rotated.body.utf8))
            XCTAssertEqual(answer.status, 503, answer.bodyText)
            XCTAssertNotNil(answer.header("Retry-After"))
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_account_state WHERE email_forwarding = 'off'"), "0")
        }
    }

    /// The red team's flood: tokens naming made-up `kid`s (one with U+202E, which must not reach a terminal) and
    /// expired ones, POSTed to the listener. Apple's keys are fetched once to start and once more for the unknown kid,
    /// not once per request; each refusal is counted under its reason and source, not stored as a row each; `list`
    /// shows the counters, with the bidi override escaped.
    func testForgedKidsCostOneKeyFetchAMinuteAndRefusalsAreCounters() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple)
            defer { setup.store.drop() }
            let listener = try setup.cli.start(["apple", "notifications", "serve", "--listen", "127.0.0.1:0", "--quiet", "--store", setup.store.location])
            defer { listener.process.terminate(); listener.process.waitUntilExit() }
            let line = try XCTUnwrap(try AppleServerFixture.waitForLine(in: listener, prefix: "listener on http://"), "\(engine): the listener did not start")
            let port = try XCTUnwrap(UInt16(try XCTUnwrap(line.components(separatedBy: "listener on http://127.0.0.1:").last).prefix { $0.isNumber }))
            func post(_ body: String) throws -> RawResponse {
                try AppleServerFixture.request(port: port, method: "POST", path: "/", body: Array(body.utf8))
            }

            let forged = 30
            for index in 0..<forged {
                let body = try apple.signed(kid: "FORGED\(index % 3)\u{202E}gpj.exe", type: "consent-revoked", sub: "001234.apple", jti: "f-\(index)")
                let answer = try post(body)
                XCTAssertEqual(answer.status, 400, "\(engine): \(answer.bodyText)")
            }
            let now = Int(Date().timeIntervalSince1970)
            for index in 0..<5 {
                let expired = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "e-\(index)", iat: now - 7200, exp: now - 3600)
                XCTAssertEqual(try post(expired.body).status, 400, "\(engine)")
            }
            let fetches = (try apple.get("/test/stats") as? [String: Any])?["key_fetches"] as? Int
            XCTAssertEqual(fetches, 2, "\(engine): one fetch to start, one forced by the first unknown kid; the rest within the minute fetch nothing")

            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_notifications"), "0", "\(engine): no row per refusal")
            XCTAssertEqual(try setup.store.query("SELECT reason, source, transport, count FROM gatehouse_apple_refusals ORDER BY reason"),
                           "exp|listener 127.0.0.1|listener|5\nunknown_key|listener 127.0.0.1|listener|\(forged)", "\(engine)")
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_apple_refusals WHERE last_detail LIKE '%eyJ%'"), "0", "\(engine): no token kept")

            // The counters are what `list` shows, the override escaped as other control characters are.
            let list = try setup.run(["apple", "notifications", "list"])
            XCTAssertTrue(list.stdout.contains("refused ×\(forged)") && list.stdout.contains("unknown_key from listener 127.0.0.1 since "), "\(engine): \(list.stdout)")
            XCTAssertTrue(list.stdout.contains("refused ×5") && list.stdout.contains("exp from listener 127.0.0.1"), "\(engine): \(list.stdout)")
            XCTAssertTrue(list.stdout.contains("FORGED2\\u{202E}gpj.exe"), "\(engine): \(list.stdout)")
            XCTAssertFalse(list.all.unicodeScalars.contains("\u{202E}"), "\(engine): a bidi override reached the terminal")
            let json = try setup.run(["apple", "notifications", "list", "--json"])
            let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            XCTAssertEqual(entries.compactMap { $0["count"] as? Int }.sorted(), [5, forged], "\(engine): \(json.stdout)")
            XCTAssertTrue(entries.allSatisfy { $0["outcome"] as? String == "refused" })

            // `ingest` counts under its own source and says so.
            let expired = try apple.notification(type: "email-enabled", sub: "001234.apple", jti: "e-ingest", iat: now - 7200, exp: now - 3600)
            let ingested = try setup.run(["apple", "notifications", "ingest", "-"], status: 1, stdin: expired.body)
            XCTAssertTrue(ingested.stdout.hasPrefix("refused: counted as exp (1 so far): the token expired at"), "\(engine): \(ingested.stdout)")
            XCTAssertEqual(try setup.store.query("SELECT count FROM gatehouse_apple_refusals WHERE source = 'ingest'"), "1", "\(engine)")
        }
    }
}
