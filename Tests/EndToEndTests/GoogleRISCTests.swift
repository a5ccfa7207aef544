import Foundation
import HTTPTestSupport
import XCTest

/// Tests/Fixtures/google_server.py, a local Google for Cross-Account Protection: discovery, keys, the stream
/// management API, and a signer of security event tokens (genuine and forged).
final class GoogleServerFixture {
    let running: CLI.Running
    let port: UInt16
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init() throws {
        running = try Tool.start(try AppleTools.python(), [fixture("google_server.py"), "--port", "0"])
        guard let line = try AppleServerFixture.waitForLine(in: running, prefix: "PORT "), let port = UInt16(line.dropFirst(5)) else {
            running.process.terminate()
            throw XCTSkip("the Google fixture server did not start: \((try? String(contentsOf: running.err, encoding: .utf8)) ?? "")")
        }
        self.port = port
    }

    deinit {
        running.process.terminate()
        running.process.waitUntilExit()
    }

    func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let answer = try AppleServerFixture.request(port: port, method: "POST", path: path, body: [UInt8](try JSONSerialization.data(withJSONObject: body)))
        return (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]) ?? [:]
    }

    func stats() throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: Data(try AppleServerFixture.request(port: port, method: "GET", path: "/test/stats").body)) as? [String: Any]) ?? [:]
    }

    /// A security event token of `event` (see the fixture's header for the fields).
    func token(_ event: String, _ fields: [String: Any] = [:]) throws -> String {
        try XCTUnwrap(try post("/test/sign", fields.merging(["event": event]) { $1 })["token"] as? String)
    }
}

/// `gatehouse google risc …` and `gatehouse security events`: every event type acted on (and not acted on) on every
/// engine, the forged tokens refused, the receiver over a socket, the stream at Google, and no key or token printed.
final class GoogleRISCTests: XCTestCase {
    static let clientID = "web-client.apps.googleusercontent.com"
    static let refreshToken = "rt-secret-0123456789abcdef-never-shown"
    static let accessToken = "at-secret-never-shown"

    final class Setup {
        let scratch: Scratch
        let google: GoogleServerFixture
        let store: TestStore
        var cli = CLI()
        var outputs: [String] = []

        init(_ engine: TestStore.Engine) throws {
            scratch = try Scratch()
            google = try GoogleServerFixture()
            store = try TestStore.make(engine, in: scratch)
            cli.environment = TestStore.environment.merging(["GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL": google.baseURL,
                                                             "GATEHOUSE_GOOGLE_RISC_BASE_URL": google.baseURL]) { $1 }
            try run(["init"])
            try run(["providers", "set", "google", "--client-id", "web=\(GoogleRISCTests.clientID)"])
            let t = "2026-01-01T00:00:00.000Z", later = "2030-01-01T00:00:00.000Z"
            let inserted = try store.query("""
                INSERT INTO "user" ("id", "name", "email", "emailVerified", "createdAt", "updatedAt") VALUES
                  ('uG', 'Gi', 'gi@example.com', true, '\(t)', '\(t)'), ('uH', 'Ha', 'ha@example.com', true, '\(t)', '\(t)');
                INSERT INTO "account" ("id", "issuer", "accountId", "providerId", "userId", "accessToken", "refreshToken", "idToken", "createdAt", "updatedAt") VALUES
                  ('acG', 'https://accounts.google.com', 'g-sub-1', 'google', 'uG', '\(GoogleRISCTests.accessToken)', '\(GoogleRISCTests.refreshToken)', 'idt-1', '\(t)', '\(t)'),
                  ('acH', 'https://accounts.google.com', 'g-sub-2', 'google', 'uH', 'at-2', 'rt-2-secret-second-account', 'idt-2', '\(t)', '\(t)');
                INSERT INTO "session" ("id", "expiresAt", "token", "createdAt", "updatedAt", "userId") VALUES
                  ('s1', '\(later)', 'st1', '\(t)', '\(t)', 'uG'), ('s2', '\(later)', 'st2', '\(t)', '\(t)', 'uG'), ('s3', '\(later)', 'st3', '\(t)', '\(t)', 'uH');
                SELECT 'ok';
                """)
            XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
        }

        @discardableResult
        func run(_ arguments: [String], status: Int32 = 0, stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
            let result = try cli.run(arguments + ["--store", store.location], stdin: stdin)
            outputs.append(result.all)
            if status >= 0 {
                XCTAssertEqual(result.status, status, "gatehouse \(arguments.joined(separator: " ")) [\(store.engine)]: \(result.all.prefix(2000))", file: file, line: line)
            }
            return result
        }

        /// `google risc ingest -` of a token; its receipt.
        func ingest(_ token: String, status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
            let result = try run(["google", "risc", "ingest", "-", "--json"], status: status, stdin: token, file: file, line: line)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all, file: file, line: line)
        }

        func sessions(_ user: String) throws -> String { try store.query(#"SELECT count(*) FROM "session" WHERE "userId" = '\#(user)'"#) }
        func column(_ column: String, of account: String) throws -> String {
            try store.query(#"SELECT coalesce("\#(column)", 'NULL') FROM "account" WHERE "id" = '\#(account)'"#)
        }
        func flags(_ user: String) throws -> [String] {
            let result = try run(["users", "show", user, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return (object?["flags"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        }

        /// The rows each case starts from: uG's two sessions and uH's one, both Google accounts' tokens, and no flags
        /// but `flags` ("sub|disabled|review", "-" for none).
        func reset(flags: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
            let t = "2026-01-01T00:00:00.000Z", later = "2030-01-01T00:00:00.000Z"
            var state = ""
            if !flags.isEmpty {
                let parts = flags.split(separator: "|").map { $0 == "-" ? "NULL" : "'\($0)'" }
                state = "INSERT INTO gatehouse_google_account_state (sub, disabled, review, updated_at) VALUES (\(parts[0]), \(parts[1]), \(parts[2]), '\(t)');"
            }
            let done = try store.query("""
                DELETE FROM "session";
                INSERT INTO "session" ("id", "expiresAt", "token", "createdAt", "updatedAt", "userId") VALUES
                  ('s1', '\(later)', 'st1', '\(t)', '\(t)', 'uG'), ('s2', '\(later)', 'st2', '\(t)', '\(t)', 'uG'), ('s3', '\(later)', 'st3', '\(t)', '\(t)', 'uH');
                UPDATE "account" SET "accessToken" = '\(GoogleRISCTests.accessToken)', "refreshToken" = '\(GoogleRISCTests.refreshToken)', "idToken" = 'idt-1' WHERE "id" = 'acG';
                UPDATE "account" SET "accessToken" = 'at-2', "refreshToken" = 'rt-2-secret-second-account', "idToken" = 'idt-2' WHERE "id" = 'acH';
                DELETE FROM gatehouse_google_account_state;
                \(state)
                SELECT 'ok';
                """)
            XCTAssertTrue(done.hasSuffix("ok"), done, file: file, line: line)
        }

        /// Sessions per user, the two Google accounts' tokens, and the Google accounts' flags, as rows "a|b|…" ("-": none).
        func snapshot() throws -> [String] {
            [try store.query(#"SELECT "userId", count(*) FROM "session" GROUP BY "userId" ORDER BY "userId""#),
             try store.query(#"SELECT "id", coalesce("accessToken", '-'), coalesce("refreshToken", '-'), coalesce("idToken", '-') FROM "account" WHERE "id" IN ('acG', 'acH') ORDER BY "id""#),
             try store.query("SELECT sub, coalesce(disabled, '-'), coalesce(review, '-') FROM gatehouse_google_account_state ORDER BY sub")]
        }

        func assertNothingSecretPrinted(file: StaticString = #filePath, line: UInt = #line) {
            for output in outputs {
                for secret in [GoogleRISCTests.refreshToken, GoogleRISCTests.accessToken, "PRIVATE KEY", "rt-2-secret"] {
                    XCTAssertFalse(output.contains(secret), "printed \(secret): \(output.prefix(500))", file: file, line: line)
                }
                XCTAssertNil(output.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.eyJ"#, options: .regularExpression), output, file: file, line: line)
            }
        }
    }

    // MARK: every event type, every engine

    func testEveryEventTypeActsOnceOnEveryEngine() throws {
        for engine in TestStore.engines {
            let setup = try Setup(engine)
            let google = setup.google
            let revoked = try setup.ingest(try google.token("sessions-revoked", ["sub": "g-sub-1", "jti": "j-1"]))
            XCTAssertEqual(revoked["outcome"] as? String, "accepted", "[\(engine)] \(revoked)")
            XCTAssertEqual(try setup.sessions("uG"), "0")
            XCTAssertEqual(try setup.column("refreshToken", of: "acG"), Self.refreshToken, "sessions-revoked leaves the tokens")
            let again = try setup.ingest(try google.token("sessions-revoked", ["sub": "g-sub-1", "jti": "j-1"]))
            XCTAssertEqual(again["outcome"] as? String, "duplicate", "a jti acts once [\(engine)]")

            _ = try setup.ingest(try google.token("token-revoked", ["token_alg": "prefix", "token": String(Self.refreshToken.prefix(16)), "jti": "j-2"]))
            XCTAssertEqual(try setup.column("refreshToken", of: "acG"), "NULL", "token-revoked clears that refresh token [\(engine)]")
            XCTAssertEqual(try setup.column("accessToken", of: "acG"), Self.accessToken, "and nothing else")
            XCTAssertEqual(try setup.column("refreshToken", of: "acH"), "rt-2-secret-second-account")

            _ = try setup.ingest(try google.token("tokens-revoked", ["sub": "g-sub-2", "jti": "j-3"]))
            XCTAssertEqual(try setup.sessions("uH"), "0", "[\(engine)]")
            XCTAssertEqual(try setup.column("accessToken", of: "acH"), "NULL")
            XCTAssertEqual(try setup.column("idToken", of: "acH"), "NULL")

            _ = try setup.ingest(try google.token("account-disabled", ["sub": "g-sub-2", "jti": "j-4"]))
            XCTAssertTrue(try setup.flags("uH").contains("google_account_disabled"), "[\(engine)]")
            let shown = try setup.run(["users", "show", "uH"]).stdout
            XCTAssertTrue(shown.contains("Google account disabled"), "users show says so: \(shown)")
            let export = try setup.run(["policy", "export", "--format", "json"]).stdout
            XCTAssertTrue(export.contains("\"googleDisabledSubs\" : [\n      \"g-sub-2\""), export)
            _ = try setup.ingest(try google.token("account-enabled", ["sub": "g-sub-2", "jti": "j-5"]))
            XCTAssertFalse(try setup.flags("uH").contains("google_account_disabled"), "account-enabled lifts the flag [\(engine)]")

            _ = try setup.ingest(try google.token("account-disabled", ["sub": "g-sub-1", "jti": "j-6", "reason": "bulk-account"]))
            XCTAssertEqual(try setup.flags("uG").filter { $0.hasPrefix("google_") }, ["google_review"], "bulk-account: review only [\(engine)]")
            _ = try setup.ingest(try google.token("account-credential-change-required", ["sub": "g-sub-2", "jti": "j-7"]))
            XCTAssertTrue(try setup.flags("uH").contains("google_review"))

            // A month old, no exp: security event tokens describe past events, and exp is not checked.
            let old = Int(Date().timeIntervalSince1970) - 30 * 86_400
            _ = try setup.ingest(try google.token("account-disabled", ["sub": "g-sub-1", "jti": "j-8", "reason": "hijacking", "iat": old]))
            XCTAssertEqual(try setup.column("accessToken", of: "acG"), "NULL", "hijacking clears the tokens [\(engine)]")

            let unknown = try setup.ingest(try google.token("sessions-revoked", ["sub": "g-nobody", "jti": "j-9"]))
            XCTAssertEqual(unknown["outcome"] as? String, "unknown_subject", "[\(engine)]")
            let verification = try setup.ingest(try google.token("verification", ["state": "s-1", "jti": "j-10"]))
            XCTAssertEqual(verification["outcome"] as? String, "accepted")

            // The inbox, and the undo of what can be given back.
            let list = try setup.run(["security", "events", "--provider", "google", "--json"])
            let events = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], list.all)
            XCTAssertEqual(events.count, 10, "[\(engine)] \(events)")
            let tokenRevoked = try XCTUnwrap(events.first { $0["event"] as? String == "token-revoked" })
            XCTAssertEqual(tokenRevoked["undoable"] as? Bool, true)
            let hijack = try XCTUnwrap(events.first { $0["event"] as? String == "account-disabled" && $0["userId"] as? String == "uG" && ($0["action"] as? String ?? "").contains("hijacking") })
            try setup.run(["security", "events", "undo", "google:\(hijack["id"] as? Int ?? 0)", "--reason", "SUP-1: a test"])
            XCTAssertEqual(try setup.column("accessToken", of: "acG"), Self.accessToken, "the undo gives the tokens back [\(engine)]")
            let sessionsEvent = try XCTUnwrap(events.first { $0["event"] as? String == "sessions-revoked" && $0["userId"] as? String == "uG" })
            let cannot = try setup.run(["security", "events", "undo", "google:\(sessionsEvent["id"] as? Int ?? 0)", "--reason", "x"], status: 1)
            XCTAssertTrue(cannot.stderr.contains("cannot be brought back"), cannot.all)
            setup.assertNothingSecretPrinted()
        }
    }

    /// Each event type from the same rows, on every engine: what it changes (sessions, the Google account's tokens,
    /// the account's flags) and nothing else, an audit entry naming its jti, and an undo that gives back all it
    /// changed but the sessions (or says there is nothing to give back).
    func testEachEventChangesWhatItSaysAndNothingElseAndIsUndoneOnEveryEngine() throws {
        let g = "acG|\(Self.accessToken)|\(Self.refreshToken)|idt-1", h = "acH|at-2|rt-2-secret-second-account|idt-2"
        let tokens = "\(g)\n\(h)", sessions = "uG|2\nuH|1", uGSignedOut = "uH|1"
        let hashed = try Self.doubleSHA512("rt-2-secret-second-account")
        let cases: [(event: String, fields: [String: Any], sessions: String, tokens: String, flags: String, before: String)] = [
            ("sessions-revoked", ["sub": "g-sub-1"], uGSignedOut, tokens, "", ""),
            ("tokens-revoked", ["sub": "g-sub-1"], uGSignedOut, "acG|-|-|-\n\(h)", "", ""),
            ("token-revoked", ["token_alg": "prefix", "token": String(Self.refreshToken.prefix(16))], sessions, "acG|\(Self.accessToken)|-|idt-1\n\(h)", "", ""),
            ("token-revoked", ["token_alg": "hash_base64_sha512_sha512", "token": hashed], sessions, "\(g)\nacH|at-2|-|idt-2", "", ""),
            ("account-disabled", ["sub": "g-sub-1", "reason": "hijacking"], uGSignedOut, "acG|-|-|-\n\(h)", "", ""),
            ("account-disabled", ["sub": "g-sub-1", "reason": "bulk-account"], sessions, tokens, "g-sub-1|-|bulk-account", ""),
            ("account-disabled", ["sub": "g-sub-1"], sessions, tokens, "g-sub-1|unspecified|-", ""),
            ("account-enabled", ["sub": "g-sub-1"], sessions, tokens, "g-sub-1|-|bulk-account", "g-sub-1|unspecified|bulk-account"),
            ("account-credential-change-required", ["sub": "g-sub-2"], sessions, tokens, "g-sub-2|-|credential-change-required", ""),
            ("verification", ["state": "v-1"], sessions, tokens, "", ""),
            ("sessions-revoked", ["sub": "g-nobody"], sessions, tokens, "", ""),
        ]
        for engine in TestStore.engines {
            let setup = try Setup(engine)
            for (index, item) in cases.enumerated() {
                let label = "\(item.event) \(item.fields) [\(engine)]"
                try setup.reset(flags: item.before)
                let jti = "case-\(index)-jti"
                let receipt = try setup.ingest(try setup.google.token(item.event, item.fields.merging(["jti": jti]) { $1 }))
                XCTAssertEqual(receipt["outcome"] as? String, index == cases.count - 1 ? "unknown_subject" : "accepted", label)
                XCTAssertEqual(try setup.snapshot(), [item.sessions, item.tokens, item.flags.isEmpty ? item.before : item.flags], label)
                XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_audit WHERE action = 'google.risc.\(item.event)' AND details LIKE '%\(jti)%'"),
                               "1", "the audit entry names the jti: \(label)")
                let changed = item.tokens != tokens || (!item.flags.isEmpty && item.flags != item.before)
                let undo = try setup.run(["security", "events", "undo", "google:\(receipt["id"] as? Int ?? 0)", "--reason", "SUP-2: a test"], status: changed ? 0 : 1)
                if changed {
                    XCTAssertEqual(try setup.snapshot(), [item.sessions, tokens, item.before], "undone, but the sessions: \(label)")
                    XCTAssertEqual(undo.stdout.contains("cannot come back"), item.sessions != sessions, undo.all)
                } else {
                    XCTAssertTrue(undo.stderr.contains("changed nothing an undo can give back"), undo.all)
                    XCTAssertEqual(undo.stderr.contains("cannot be brought back"), item.sessions != sessions, undo.all)
                }
            }
            XCTAssertEqual(try setup.store.query("SELECT verify_state FROM gatehouse_google_risc_stream"), "v-1", "verification records its state [\(engine)]")
            let list = try setup.run(["security", "events", "--provider", "google"]).stdout
            XCTAssertTrue(list.contains("no (sessions cannot come back)"), list)
            XCTAssertEqual(list.components(separatedBy: "undone").count - 1, 8, "the inbox says which were undone: \(list)")
            let disabled = try setup.run(["security", "events", "--event", "account-disabled", "--json"]).stdout
            XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(disabled.utf8)) as? [[String: Any]])?.count, 3, disabled)
            let later = try setup.run(["security", "events", "--since", "2099-01-01"]).stdout
            XCTAssertTrue(later.hasPrefix("no security event recorded since then"), later)
            // A hijacking event changes no flag: an earlier event's flag can still be undone after it.
            try setup.reset()
            let flagged = try setup.ingest(try setup.google.token("account-disabled", ["sub": "g-sub-2", "jti": "later-1"]))
            _ = try setup.ingest(try setup.google.token("account-disabled", ["sub": "g-sub-2", "jti": "later-2", "reason": "hijacking"]))
            try setup.run(["security", "events", "undo", "google:\(flagged["id"] as? Int ?? 0)", "--reason", "SUP-4: a test"])
            XCTAssertEqual(try setup.snapshot()[2], "", "[\(engine)]")
            setup.assertNothingSecretPrinted()
        }
    }

    /// The issuer and the key set are the ones Google's discovery document names: with the stand-in naming another
    /// issuer and serving its keys at another path, that issuer's tokens are accepted and https://accounts.google.com/'s
    /// refused. aud may be any of the app's Google client ids; exp, even a month past, is not checked.
    func testTheIssuerAndKeysComeFromDiscoveryAndAudIsAnyOfTheClientIDs() throws {
        let setup = try Setup(.sqlite)
        let google = setup.google
        _ = try google.post("/test/config", ["issuer": "https://risc.example.test/", "jwks_path": "/risc/elsewhere/keys"])
        XCTAssertEqual(try setup.ingest(try google.token("sessions-revoked", ["sub": "g-sub-1"]))["outcome"] as? String, "accepted")
        let googles = try setup.ingest(try google.token("sessions-revoked", ["sub": "g-sub-2", "iss": "https://accounts.google.com/"]), status: 1)
        XCTAssertEqual(googles["refusal"] as? String, "issuer", "\(googles)")
        XCTAssertEqual(try setup.sessions("uH"), "1")

        try setup.run(["providers", "set", "google", "--client-id", "web=\(Self.clientID)", "--client-id", "ios=ios-client.apps.googleusercontent.com"])
        XCTAssertEqual(try setup.ingest(try google.token("sessions-revoked", ["sub": "g-sub-2", "aud": "ios-client.apps.googleusercontent.com"]))["outcome"] as? String,
                       "accepted", "aud is any of the app's client ids")
        let listed = try setup.ingest(try google.token("account-credential-change-required", ["sub": "g-sub-2", "aud": ["someone-else", "ios-client.apps.googleusercontent.com"]]))
        XCTAssertEqual(listed["outcome"] as? String, "accepted", "an aud list holding one of them")
        let monthAgo = Int(Date().timeIntervalSince1970) - 30 * 86_400
        let expired = try setup.ingest(try google.token("account-disabled", ["sub": "g-sub-2", "iat": monthAgo - 3600, "exp": monthAgo]))
        XCTAssertEqual(expired["outcome"] as? String, "accepted", "exp is not checked: \(expired)")
        setup.assertNothingSecretPrinted()
    }

    /// Every wrong invocation is answered with what is wrong and how to fix it, exit 1 or 2 (usage), never a crash.
    func testBadInputIsAnsweredClearlyNeverWithACrash() throws {
        let setup = try Setup(.sqlite)
        let folder = setup.scratch.path("a-folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let notAKey = setup.scratch.path("not-a-key.json")
        try Data(#"{"type": "service_account"}"#.utf8).write(to: URL(fileURLWithPath: notAKey))
        chmod(notAKey, 0o600)
        let cases: [(arguments: [String], stdin: String?, status: Int32, says: String)] = [
            (["google", "risc", "ingest", setup.scratch.path("missing.jwt")], nil, 1, "cannot read"),
            (["google", "risc", "ingest", folder], nil, 1, "is a folder, not a security event token"),
            (["google", "risc", "ingest", "-"], "", 1, "the body is not a signed token"),
            (["google", "risc", "stream", "update", "--url", "https://x.example/risc", "--events", "bogus", "--service-account", notAKey], nil, 2, "\"bogus\" is not an event type"),
            (["google", "risc", "stream", "show", "--service-account", notAKey], nil, 1, "is not a service account's JSON key"),
            (["google", "risc", "stream", "show", "--service-account", folder], nil, 1, "is a folder"),
            (["google", "risc", "stream", "verify", "--state", "état", "--service-account", notAKey], nil, 2, "printable ASCII"),
            (["google", "risc", "serve", "--path", "risc"], nil, 2, "--path must start with /"),
            (["google", "risc", "serve", "--listen", "nowhere"], nil, 2, "--listen must be ADDRESS:PORT"),
            (["security", "events", "--since", "yesterday"], nil, 2, "is neither an ISO-8601 time nor a duration"),
            (["security", "events", "--provider", "microsoft"], nil, 2, "--provider must be apple or google"),
            (["security", "events", "undo", "twelve", "--reason", "x"], nil, 2, "write PROVIDER:ID"),
            (["security", "events", "undo", "apple:3", "--reason", "x"], nil, 1, "Apple's notifications change nothing an undo gives back"),
            (["security", "events", "undo", "google:999", "--reason", "x"], nil, 1, "no Google security event 999"),
        ]
        for item in cases {
            let result = try setup.run(item.arguments, status: item.status, stdin: item.stdin)
            XCTAssertTrue(result.all.contains(item.says), "gatehouse \(item.arguments.joined(separator: " ")): \(result.all)")
            XCTAssertFalse(result.all.contains("Fatal error") || result.all.contains("Stack dump"), result.all)
        }
        XCTAssertEqual(try setup.store.query("SELECT coalesce(sum(count), 0) FROM gatehouse_google_refusals"), "1", "only the empty token is a refusal")
    }

    /// `google.risc` warns when the stream is enabled but no event or verification arrived in 30 days, and is fine
    /// once one did.
    func testHealthWarnsWhenNoEventOrVerificationArrivedIn30Days() throws {
        let setup = try Setup(.sqlite)
        func risc() throws -> [String: Any]? {
            let result = try setup.run(["health", "--json"], status: -1)
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return (object?["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "google.risc" }
        }
        let old = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-31 * 86_400))
        let inserted = try setup.store.query("""
            INSERT INTO gatehouse_google_risc_stream (id, status, updated_at) VALUES (1, 'enabled', '\(old)');
            INSERT INTO gatehouse_google_events (id, received_at, transport, jti, event_type, outcome, action, token_sha256)
              VALUES (1, '\(old)', 'listener', 'j-old', 'verification', 'recorded', 'verification received', 'x');
            SELECT 'ok';
            """)
        XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
        let quiet = try XCTUnwrap(try risc())
        XCTAssertEqual(quiet["status"] as? String, "warning", "\(quiet)")
        XCTAssertTrue((quiet["summary"] as? String ?? "").contains("over 30 days"), "\(quiet)")
        _ = try setup.ingest(try setup.google.token("verification", ["state": "fresh"]))
        XCTAssertEqual(try risc()?["status"] as? String, "ok")
    }

    // MARK: refusals

    func testForgedTokensAreRefusedAndChangeNothing() throws {
        let setup = try Setup(.sqlite)
        let google = setup.google
        let forged: [(String, String, String)] = [
            ("another key", try google.token("sessions-revoked", ["sub": "g-sub-1", "key": "other"]), "signature"),
            ("alg none", try google.token("sessions-revoked", ["sub": "g-sub-1", "alg": "none"]), "algorithm"),
            ("HS256 with the public key", try google.token("sessions-revoked", ["sub": "g-sub-1", "alg": "HS256"]), "algorithm"),
            ("another audience", try google.token("sessions-revoked", ["sub": "g-sub-1", "aud": "someone-else.apps.googleusercontent.com"]), "audience"),
            ("another issuer", try google.token("sessions-revoked", ["sub": "g-sub-1", "iss": "https://accounts.example.com/"]), "issuer"),
            ("an unknown kid", try google.token("sessions-revoked", ["sub": "g-sub-1", "key": "rotated"]), "unknown_key"),
            ("no jti", try google.token("sessions-revoked", ["sub": "g-sub-1", "omit": ["jti"]]), "jti"),
            ("no issuer", try google.token("sessions-revoked", ["sub": "g-sub-1", "omit": ["iss"]]), "issuer"),
            ("no audience", try google.token("sessions-revoked", ["sub": "g-sub-1", "omit": ["aud"]]), "audience"),
            ("two events", try google.token("sessions-revoked", ["sub": "g-sub-1", "second_event": true]), "events"),
            ("an event without its subject", try google.token("sessions-revoked", ["sub": "g-sub-1", "no_subject": true]), "subject"),
            ("an unknown event type", try google.token("https://schemas.openid.net/secevent/risc/event-type/account-purged", ["sub": "g-sub-1"]), "event_type"),
            ("not a token", "hello.world", "not_a_token"),
            ("over 64 KB", String(repeating: "a", count: 70_000), "too_large"),
        ]
        for (name, token, reason) in forged {
            let receipt = try setup.ingest(token, status: 1)
            XCTAssertEqual(receipt["outcome"] as? String, "refused", name)
            XCTAssertEqual(receipt["refusal"] as? String, reason, "\(name): \(receipt)")
        }
        XCTAssertEqual(try setup.sessions("uG"), "2", "nothing changed")
        XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_google_events"), "0", "a refusal is no event")
        XCTAssertEqual(try setup.store.query("SELECT sum(count) FROM gatehouse_google_refusals"), String(forged.count), "each refusal is counted")
        let listed = try setup.run(["security", "events", "refused", "--provider", "google", "--json"])
        let counters = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], listed.all)
        XCTAssertEqual(counters.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }, forged.count, "the counters are listed: \(listed.stdout)")
        XCTAssertEqual(Set(counters.compactMap { $0["reason"] as? String }), Set(forged.map { $0.2 }))
        XCTAssertTrue(try setup.run(["security", "events", "refused"]).stdout.contains("algorithm"))
        // The other identifier Google uses for a refresh token: Base64(SHA-512(SHA-512(token))).
        let hashed = try Self.doubleSHA512(Self.refreshToken)
        _ = try setup.ingest(try google.token("token-revoked", ["token_alg": "hash_base64_sha512_sha512", "token": hashed]))
        XCTAssertEqual(try setup.column("refreshToken", of: "acG"), "NULL")
        setup.assertNothingSecretPrinted()
    }

    static func doubleSHA512(_ token: String) throws -> String {
        try AppleTools.python("import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(hashlib.sha512(sys.argv[1].encode()).digest()).digest()).decode())",
                              [token]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: the receiver and the stream

    final class Receiver: @unchecked Sendable {
        let running: CLI.Running
        let port: UInt16
        init(_ setup: Setup) throws {
            running = try setup.cli.start(["google", "risc", "serve", "--listen", "127.0.0.1:0", "--path", "/risc", "--store", setup.store.location])
            guard let line = try AppleServerFixture.waitForLine(in: running, prefix: "receiver on"),
                  let range = line.range(of: #"127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                  let port = UInt16(line[range].split(separator: ":")[1]) else {
                running.process.terminate()
                throw XCTSkip("the receiver did not start: \((try? String(contentsOf: running.err, encoding: .utf8)) ?? "")")
            }
            self.port = port
        }
        deinit { running.process.terminate(); running.process.waitUntilExit() }

        func post(_ body: String, path: String = "/risc", method: String = "POST") throws -> RawResponse {
            try AppleServerFixture.request(port: port, method: method, path: path, body: Array(body.utf8), contentType: "application/secevent+jwt")
        }
    }

    func testTheReceiverAnswersAsRFC8935SaysAndFetchesKeysAgainOnlyOnceAMinute() throws {
        let setup = try Setup(.sqlite)
        let receiver = try Receiver(setup)
        let google = setup.google
        XCTAssertEqual(try receiver.post(try google.token("sessions-revoked", ["sub": "g-sub-1"])).status, 202)
        XCTAssertEqual(try receiver.post(try google.token("sessions-revoked", ["sub": "g-nobody"])).status, 202, "an unknown subject is recorded")
        let refused = try receiver.post(try google.token("sessions-revoked", ["sub": "g-sub-2", "key": "other"]))
        XCTAssertEqual(refused.status, 400)
        let error = try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: String]
        XCTAssertEqual(error?["err"], "invalid_key", "\(String(decoding: refused.body, as: UTF8.self))")
        for body in ["hello.world", "", "eyJhbGciOiJSUzI1NiJ9.e30"] {
            let unparsed = try receiver.post(body)
            XCTAssertEqual(unparsed.status, 400, "\(body): \(String(decoding: unparsed.body, as: UTF8.self))")
            let shape = try JSONSerialization.jsonObject(with: Data(unparsed.body)) as? [String: String]
            XCTAssertEqual(shape?["err"], "invalid_request", "RFC 8935's error shape")
            XCTAssertFalse((shape?["description"] ?? "").isEmpty)
        }
        XCTAssertEqual(try google.stats()["discovery"] as? Int, 1, "the discovery document is fetched once and kept")
        XCTAssertEqual(try receiver.post(String(repeating: "a", count: 70_000)).status, 413)
        XCTAssertEqual(try receiver.post("x", path: "/elsewhere").status, 404)
        XCTAssertEqual(try receiver.post("", method: "GET").status, 405)
        XCTAssertEqual(try setup.sessions("uH"), "1", "a refused token changes nothing")

        // Google rotates its keys: a token under the new kid fetches them again, once; another unknown kid within the
        // minute is refused without a fetch.
        let certsBefore = try google.stats()["certs"] as? Int ?? 0
        _ = try google.post("/test/rotate", [:])
        XCTAssertEqual(try receiver.post(try google.token("sessions-revoked", ["sub": "g-sub-2", "key": "rotated"])).status, 202)
        XCTAssertEqual(try google.stats()["certs"] as? Int, certsBefore + 1)
        XCTAssertEqual(try receiver.post(try google.token("sessions-revoked", ["sub": "g-sub-2", "kid": "made-up-kid"])).status, 400)
        XCTAssertEqual(try google.stats()["certs"] as? Int, certsBefore + 1, "at most one fetch a minute")

        // A flood of forged tokens from many connections: every one is answered, and a genuine one still gets through.
        let forged = try google.token("sessions-revoked", ["sub": "g-sub-1", "key": "other"])
        let statuses = Collected<Int>()
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            for _ in 0..<10 { statuses.append((try? receiver.post(forged).status) ?? 0) }
        }
        XCTAssertEqual(Set(statuses.values), [400], "every forged token is answered 400")
        // Slow clients holding connections open with half a request do not keep a genuine delivery waiting.
        let slow = try (0..<40).map { _ -> RawHTTPClient in
            let client = try RawHTTPClient(port: receiver.port)
            try client.send("POST /risc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 900\r\n\r\neyJ")
            return client
        }
        let started = Date()
        XCTAssertEqual(try receiver.post(try google.token("account-credential-change-required", ["sub": "g-sub-2"])).status, 202)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "answered while 40 slow clients hold connections, not after their timeout")
        _ = slow
        XCTAssertEqual(try receiver.post(try google.token("account-disabled", ["sub": "g-sub-1"])).status, 202)
        XCTAssertTrue(try setup.flags("uG").contains("google_account_disabled"))
        // The receiver's log: one line a request, never a token.
        let log = ((try? String(contentsOf: receiver.running.out, encoding: .utf8)) ?? "") + ((try? String(contentsOf: receiver.running.err, encoding: .utf8)) ?? "")
        XCTAssertTrue(log.contains(" 202 "), log.prefix(500).description)
        XCTAssertNil(log.range(of: #"eyJ[A-Za-z0-9_-]{10,}"#, options: .regularExpression), "a token in the receiver's log")
    }

    /// A store held by another process: the delivery is answered 503 with Retry-After within the bound, not held
    /// open, and the event is recorded once the lock goes (a redelivery then acts no more).
    func testALockedStoreIsAnsweredWithRetryAfterAndTheEventIsRecordedOnceItFrees() throws {
        let setup = try Setup(.sqlite)
        let receiver = try Receiver(setup)
        let locker = try Tool.start(try AppleTools.python(), ["-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("BEGIN EXCLUSIVE")
            print("LOCKED", flush=True)
            time.sleep(6)
            c.execute("COMMIT")
            """, setup.store.location])
        defer { locker.process.terminate(); locker.process.waitUntilExit() }
        XCTAssertNotNil(try AppleServerFixture.waitForLine(in: locker, prefix: "LOCKED"))
        let token = try setup.google.token("account-disabled", ["sub": "g-sub-1", "jti": "held-1"])
        let started = Date()
        let answer = try receiver.post(token)
        XCTAssertEqual(answer.status, 503, String(decoding: answer.body, as: UTF8.self))
        XCTAssertNotNil(answer.headers.first { $0.name.lowercased() == "retry-after" }, "Google is told when to deliver again")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "answered within the bound, not when the lock goes")
        locker.process.waitUntilExit()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, try setup.store.query("SELECT count(*) FROM gatehouse_google_events") != "1" { usleep(200_000) }
        XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_google_events"), "1", "recorded once the store frees")
        XCTAssertEqual(try receiver.post(token).status, 202, "Google's redelivery is a duplicate, answered 202")
        XCTAssertEqual(try setup.store.query("SELECT count(*) FROM gatehouse_google_events"), "1")
    }

    func testTheStreamIsManagedWithAServiceAccountAndVerificationReachesTheReceiver() throws {
        let setup = try Setup(.sqlite)
        let receiver = try Receiver(setup)
        let key = try XCTUnwrap(try setup.google.post("/test/service-account", [:])["key"] as? [String: Any])
        let path = setup.scratch.path("service-account.json")
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        let open = try setup.run(["google", "risc", "stream", "update", "--url", "http://127.0.0.1:\(receiver.port)/risc", "--service-account", path], status: 1)
        XCTAssertTrue(open.stderr.contains("chmod 600"), open.all)
        chmod(path, 0o600)
        let none = try setup.run(["google", "risc", "stream", "show"], status: 1)
        XCTAssertTrue(none.stderr.contains("GOOGLE_APPLICATION_CREDENTIALS"), none.all)
        let health = try setup.run(["health", "--json"], status: -1)
        XCTAssertTrue(health.stdout.contains("stream is not enabled"), health.stdout)
        try setup.run(["google", "risc", "stream", "update", "--url", "http://127.0.0.1:\(receiver.port)/risc", "--service-account", path])
        // The key named by GOOGLE_APPLICATION_CREDENTIALS, with no --service-account.
        setup.cli.environment["GOOGLE_APPLICATION_CREDENTIALS"] = path
        try setup.run(["google", "risc", "stream", "disable"])
        try setup.run(["google", "risc", "stream", "enable"])
        let shown = try setup.run(["google", "risc", "stream", "show", "--json"])
        XCTAssertTrue(shown.stdout.contains("/risc"), shown.all)
        let stream = try XCTUnwrap(try setup.google.stats()["stream"] as? [String: Any])
        XCTAssertEqual(stream["events_requested"] as? [String], [
            "https://schemas.openid.net/secevent/risc/event-type/sessions-revoked", "https://schemas.openid.net/secevent/oauth/event-type/tokens-revoked",
            "https://schemas.openid.net/secevent/oauth/event-type/token-revoked", "https://schemas.openid.net/secevent/risc/event-type/account-disabled",
            "https://schemas.openid.net/secevent/risc/event-type/account-enabled",
            "https://schemas.openid.net/secevent/risc/event-type/account-credential-change-required",
            "https://schemas.openid.net/secevent/risc/event-type/verification",
        ], "update asks for every event type by default")
        XCTAssertEqual(stream["status"] as? String, "enabled")
        try setup.run(["google", "risc", "stream", "verify", "--state", "check-42", "--service-account", path])
        let management = try setup.google.stats()["management"] as? [[String: Any]] ?? []
        XCTAssertEqual(management.map { $0["path"] as? String ?? "" }, ["/v1beta/stream:update", "/v1beta/stream/status:update", "/v1beta/stream/status:update", "/v1beta/stream:verify"],
                       "the stand-in accepted every signed management call: \(management)")
        let deadline = Date().addingTimeInterval(5)
        var events = ""
        while Date() < deadline, !events.contains("check-42") {
            events = try setup.run(["security", "events", "--provider", "google"]).stdout
            usleep(100_000)
        }
        XCTAssertTrue(events.contains("verification received (state \"check-42\")"), events)
        let after = try setup.run(["health", "--json"], status: -1)
        XCTAssertTrue(after.stdout.contains("the stream is enabled"), after.stdout)
        for output in setup.outputs { XCTAssertFalse(output.contains(key["private_key"] as? String ?? "PRIVATE KEY"), output) }
        // Nor is any of it copied into the store: not the PEM, not a line of its body.
        let dump = try Tool.run("/usr/bin/sqlite3", [setup.store.location, ".dump"]).stdout
        XCTAssertTrue(dump.contains("gatehouse_google_risc_stream"), "the dump is read")
        let pem = (key["private_key"] as? String ?? "").split(separator: "\n").filter { !$0.hasPrefix("-----") }
        XCTAssertFalse(pem.isEmpty)
        for line in pem { XCTAssertFalse(dump.contains(line), "a line of the private key is in the store") }
        setup.assertNothingSecretPrinted()
    }
}
