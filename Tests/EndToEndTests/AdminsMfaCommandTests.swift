import Foundation
import HTTPTestSupport
import XCTest

/// `gatehouse admins mfa require|reset` and `admins list --json` with factors, as an operator meets them: the built
/// binary, beside a console (`serve --step-up-window`) where the admin enrols TOTP with codes computed by pyotp.
final class AdminsMfaCommandTests: XCTestCase {
    let cli = CLI()

    func testEnrolListRequireResetAndTheStepUpWindow() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        let passwordFile = scratch.path("pw")
        let password = "the ops password, long enough"
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cli.run(["init", "--store", store, "--admin", "ops", "--admin-password-file", passwordFile]).status, 0)
        XCTAssertEqual(try cli.run(["serve", "--store", store, "--step-up-window", "0s"]).status, 2, "a window under 1 s is refused")
        let ipOrigin = try cli.run(["serve", "--store", store, "--origin", "https://10.0.0.1"])
        XCTAssertEqual(ipOrigin.status, 2, "an origin browsers refuse passkeys on: \(ipOrigin.all)")
        XCTAssertTrue(ipOrigin.all.contains("IP address"), ipOrigin.all)
        let console = try cli.start(["serve", "--store", store, "--listen", "127.0.0.1:0", "-q", "--step-up-window", "2s"])
        defer { kill(console.process.processIdentifier, SIGTERM); _ = try? console.finish() }
        var port: UInt16?
        for _ in 0..<100 where port == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let printed = (try? String(contentsOf: console.out, encoding: .utf8)) ?? ""
            port = printed.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }
                .flatMap { UInt16($0.dropFirst("http://127.0.0.1:".count).dropLast()) }
        }
        let consolePort = try XCTUnwrap(port, "serve printed no URL")
        func post(_ path: String, _ body: [String: Any], token: String? = nil) throws -> (status: Int, json: [String: Any], text: String) {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            let client = try RawHTTPClient(port: consolePort)
            try client.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(consolePort)\r\nContent-Type: application/json\r\n"
                            + (token.map { "Authorization: Bearer \($0)\r\n" } ?? "")
                            + "Content-Length: \(text.utf8.count)\r\nConnection: close\r\n\r\n\(text)")
            let response = try client.readResponse(timeout: 30)
            return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:], response.bodyText)
        }
        /// The TOTP code of `secret` now, one step ahead when `next` (pyotp: an independent implementation).
        func code(_ secret: String, next: Bool = false) throws -> String {
            try AppleTools.python("import pyotp, sys, time; print(pyotp.TOTP(sys.argv[1]).at(time.time() + (30 if sys.argv[2] == '1' else 0)))",
                                [secret, next ? "1" : "0"])
        }

        let login = try post("/api/auth/login", ["username": "ops", "password": password])
        let access = try XCTUnwrap(login.json["accessToken"] as? String, login.text)
        let enrolled = try post("/api/auth/mfa/totp", ["password": password], token: access)
        XCTAssertEqual(enrolled.status, 200, enrolled.text)
        let secret = try XCTUnwrap(enrolled.json["secret"] as? String)
        let confirmed = try post("/api/auth/mfa/totp/confirm", ["code": try code(secret)], token: access)
        XCTAssertEqual((confirmed.json["recoveryCodes"] as? [String])?.count, 10, confirmed.text)
        let recoveryCodes = try XCTUnwrap(confirmed.json["recoveryCodes"] as? [String])

        // The window is open right after the factor was checked, then closes.
        let change = ["key": "accountLinking.allowUnlinkingAll", "value": true, "reason": "e2e"] as [String: Any]
        XCTAssertEqual(try post("/api/policy", change, token: access).status, 200)
        Thread.sleep(forTimeInterval: 2.5)
        let stale = try post("/api/policy", change, token: access)
        XCTAssertEqual(stale.status, 403, stale.text)
        XCTAssertEqual((stale.json["error"] as? [String: Any])?["code"] as? String, "step_up_required")

        // The listing names the factor, never its secret.
        let list = try cli.run(["admins", "list", "--store", store, "--json"])
        XCTAssertEqual(list.status, 0, list.all)
        let admins = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        let factors = try XCTUnwrap(admins.first?["factors"] as? [[String: Any]])
        XCTAssertEqual(factors.map { $0["kind"] as? String }, ["totp"])
        XCTAssertEqual(factors.first?["name"] as? String, "Authenticator app")
        XCTAssertEqual(admins.first?["recoveryCodesLeft"] as? Int, 10)
        XCTAssertEqual(admins.first?["username"] as? String, "ops")
        XCTAssertFalse(list.stdout.contains(secret))
        for recovery in recoveryCodes { XCTAssertFalse(list.stdout.contains(recovery)) }
        XCTAssertTrue(try cli.run(["admins", "list", "--store", store]).stdout.contains("totp"))
        // No base32 secret at rest: a dump of the store does not hold it.
        let dump = try sqlite3(store, ".dump")
        XCTAssertTrue(dump.contains("gatehouse_admin_factors"))
        XCTAssertFalse(dump.contains(secret))

        // The login now asks for the factor.
        let second = try post("/api/auth/login", ["username": "ops", "password": password])
        XCTAssertEqual(second.json["mfaRequired"] as? Bool, true, second.text)
        XCTAssertNil(second.json["accessToken"])
        let mfaToken = try XCTUnwrap(second.json["mfaToken"] as? String)
        let finished = try post("/api/auth/login/mfa", ["mfaToken": mfaToken, "method": "totp", "code": try code(secret, next: true)])
        XCTAssertNotNil(finished.json["accessToken"], finished.text)

        // require on|off.
        let on = try cli.run(["admins", "mfa", "require", "on", "--store", store, "--json"])
        XCTAssertEqual(on.status, 0, on.all)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(on.stdout.utf8)) as? [String: Bool], ["required": true, "changed": true])
        XCTAssertEqual(try cli.run(["admins", "mfa", "require", "on", "--store", store]).stdout,
                       "Every admin now needs a second factor; one without can sign in only to enrol (it was already on)\n")
        XCTAssertNotEqual(try cli.run(["admins", "mfa", "require", "maybe", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["admins", "mfa", "require", "--store", store]).status, 2, "on|off is required")

        // reset: break-glass, with a reason, audited.
        let noReason = try cli.run(["admins", "mfa", "reset", "ops", "--store", store])
        XCTAssertEqual(noReason.status, 2, noReason.all)
        XCTAssertEqual(try cli.run(["admins", "mfa", "reset", "nobody", "--reason", "x", "--store", store]).status, 1)
        let reset = try cli.run(["admins", "mfa", "reset", "ops", "--reason", "lost phone, ticket 4711", "--store", store, "--actor", "ops-bob"])
        XCTAssertEqual(reset.status, 0, reset.all)
        XCTAssertTrue(reset.stdout.hasPrefix("Removed 1 factor(s) and 10 recovery code(s) of ops; 2 console session(s) ended."), reset.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT actor || ' ' || subject FROM gatehouse_audit WHERE action = 'admin.mfa.reset'"), "ops-bob ops")
        let details = try sqlite3(store, "SELECT details FROM gatehouse_audit WHERE action = 'admin.mfa.reset'")
        XCTAssertTrue(details.contains("lost phone, ticket 4711") && details.contains("break_glass"), details)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_admin_factors"), "0")
        // With the requirement on, the admin signs in with the password and may only enrol.
        let again = try post("/api/auth/login", ["username": "ops", "password": password])
        let fresh = try XCTUnwrap(again.json["accessToken"] as? String, again.text)
        let refused = try post("/api/policy", change, token: fresh)
        XCTAssertEqual((refused.json["error"] as? [String: Any])?["code"] as? String, "mfa_enrollment_required", refused.text)
        XCTAssertEqual(try post("/api/auth/mfa/totp", ["password": password], token: fresh).status, 200)
        let audit = try sqlite3(store, "SELECT group_concat(details, ' ') FROM gatehouse_audit")
        XCTAssertFalse(audit.contains(secret))
    }
}
