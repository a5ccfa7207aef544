import Foundation
import XCTest

/// Numbers from users and tokens at their extremes: every duration option and every JWT time claim gets ±1e16,
/// 1e308, Int64's edges, strings, objects and arrays. Each must end in a verdict or a clear error, never a trap
/// (a trapped process exits with a signal, which `Tool` reports as a status above 128).
final class HostileNumberTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["providers", "set", "apple", "--services-id", "com.example.web", "--bundle-id", "com.example.app",
                                    "--audience", "com.example.app", "--store", store]).status, 0)
    }

    static let hostileDurations = ["9223372036854775807", "9223372036854775808", "9223372036854776s", "200000000000d",
                                   "106751991167301d", "15250284452472w", "99999999999999999999h", "3162240001", "36601d",
                                   "-1", "1e16", "1e308", "-1e16", "NaN", "inf", "0x10", "1h-1", "", " ", "١٢s", "１h"]

    /// Each duration option refuses extreme values with exit 1 or 2 and a message, and never traps.
    func testEveryDurationOptionRefusesExtremesWithoutATrap() throws {
        XCTAssertEqual(try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "t", "--store", store]).status, 0)
        let commands: [(String, [String])] = [
            ("audit --since", ["audit", "--since"]),
            ("policy set --for", ["policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "t", "--for"]),
            ("apple secret mint --ttl", ["apple", "secret", "mint", "--ttl"]),
            ("health --sweep-budget", ["health", "--sweep-budget"]),
            ("health --expect-every", ["health", "--expect-every"]),
            ("gates set --expires", ["gates", "set", "apple", "membership", "met", "--evidence", "portal", "--expires"]),
        ]
        for (name, prefix) in commands {
            for value in Self.hostileDurations {
                let result = try cli.run(prefix + [value, "--store", store])
                XCTAssertLessThan(result.status, 4, "\(name) \(value) trapped: \(result.all)")
                if name != "health --sweep-budget" && name != "health --expect-every" {
                    XCTAssertTrue([1, 2].contains(result.status), "\(name) \(value) was accepted: \(result.all)")
                    XCTAssertFalse(result.stderr.isEmpty, "\(name) \(value) failed without saying why")
                }
            }
        }
        // The bound itself is a clear error naming the limit.
        let tooLong = try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "t", "--for", "200000000000d", "--store", store])
        XCTAssertEqual(tooLong.status, 2, "a malformed option value is bad usage: \(tooLong.all)")
        XCTAssertTrue(tooLong.stderr.contains("longer than 100 years") || tooLong.stderr.contains("outside"), tooLong.stderr)
        // Still a working store afterwards: the policy is where the one accepted change left it.
        let show = try cli.run(["policy", "show", "--json", "--store", store])
        XCTAssertEqual(show.status, 0, show.all)
    }

    /// `token inspect` judges each claim exactly as jose's `jwtVerify` (the verifier Better Auth runs, here
    /// Debian's node-jose) does on the same signed token: accepted or rejected, and with the same error.
    func testTokenInspectAgreesWithJoseOnHostileClaims() throws {
        let now = Int(Date().timeIntervalSince1970)
        func payload(_ extra: String, iss: String = #""https://appleid.apple.com""#, aud: String = #""com.example.app""#) -> String {
            #"{"iss":\#(iss),"aud":\#(aud),"sub":"001.abc","email":"ana@example.com","email_verified":true\#(extra.isEmpty ? "" : ",")\#(extra)}"#
        }
        let good = "\"iat\":\(now - 60),\"exp\":\(now + 600)"
        var cases = [payload(good)]
        for claim in ["iat", "exp", "nbf"] {
            for value in ["1e16", "-1e16", "1e308", "-1e308", "9007199254740993", "-9223372036854775808", "1.5", "0",
                          #""never""#, #""1700000000""#, #"{"x":1}"#, "[1]", "null", "true", "[]"] {
                var claims = ["iat": "\(now - 60)", "exp": "\(now + 600)"]
                claims[claim] = value
                cases.append(payload(claims.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")))
            }
        }
        cases += [
            payload("\"iat\":\(now + 7200),\"exp\":\(now + 9000)"),           // issued in the future, beyond any skew
            payload("\"iat\":\(now - 7200),\"exp\":\(now + 600)"),            // older than maxTokenAge
            payload("\"iat\":\(now - 60),\"exp\":\(now - 600)"),              // expired
            payload("\"iat\":\(now - 60)"),                                    // no exp: maxTokenAge alone
            payload("\"exp\":\(now + 600)"),                                   // no iat
            payload(good, aud: #"{"x":1}"#), payload(good, aud: "[1,2]"), payload(good, aud: #"["other","com.example.app"]"#),
            payload(good, aud: "123"), payload(good, aud: "null"), payload(good, iss: "1"), payload(good, iss: #"{"a":1}"#),
        ]
        let oracle = try runOracle(audience: "com.example.app", cases: cases)
        let jwks = scratch.path("oracle-keys.json")
        try JSONSerialization.data(withJSONObject: oracle.jwks).write(to: URL(fileURLWithPath: jwks))
        XCTAssertEqual(oracle.results.count, cases.count)
        var rejected = 0
        for (index, expected) in oracle.results.enumerated() {
            let result = try cli.run(["token", "inspect", "-", "--provider", "apple", "--jwks", jwks, "--json", "--store", store], stdin: expected.token)
            XCTAssertLessThan(result.status, 4, "case \(cases[index]) trapped: \(result.all)")
            guard let report = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
                XCTFail("case \(cases[index]): no JSON report: \(result.all)"); continue
            }
            let decisive = report["decisive"] as? [String: Any]
            let reported = decisive?["reported"] as? String
            if let error = expected.error, reported?.hasPrefix("JWTClaimValidationFailed: missing required") == true {
                // Debian's jose (4.11) predates the presence check that Better Auth's jose (6.x) runs first; both reject.
                rejected += 1
                XCTAssertFalse(error.isEmpty)
            } else if let error = expected.error {
                rejected += 1
                XCTAssertEqual(decisive?["reported"] as? String, error, "case \(cases[index]): jose says \(error); Gatehouse: \(report["verdict"] ?? "")")
            } else {
                XCTAssertNil(decisive, "case \(cases[index]): jose accepts it; Gatehouse: \(report["verdict"] ?? "")")
            }
        }
        XCTAssertGreaterThan(rejected, 30, "the cases should mostly be rejected; the oracle may not have run as intended")
    }

    struct Oracle {
        let jwks: Any
        let results: [(token: String, error: String?)]
    }

    /// Signs and verifies `cases` with jose in node (Tests/Fixtures/jose-oracle.js).
    func runOracle(audience: String, cases: [String]) throws -> Oracle {
        let input = try JSONSerialization.data(withJSONObject: ["audience": audience, "cases": cases])
        let script = CLI.packageRoot.appendingPathComponent("Tests/Fixtures/jose-oracle.js").path
        let result = try Tool.run("/usr/bin/env", ["node", script], stdin: String(decoding: input, as: UTF8.self))
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let results = object["results"] as? [[String: Any]] else {
            XCTFail("the jose oracle failed (ops/test installs nodejs and node-jose): \(result.stderr)")
            throw CocoaError(.fileReadUnknown)
        }
        return Oracle(jwks: object["jwks"] as Any, results: results.map { ($0["token"] as! String, $0["error"] as? String) })
    }
}
