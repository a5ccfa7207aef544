@testable import D1Engine
@testable import HTTPClient
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// The one rule for a URL a secret is sent to (`OutboundURL`): https, or plain http only to a loopback literal or
/// `localhost`; a user name or password is refused, whichever parser would have read it which way. And which curl
/// failures mean the request provably never left (`HTTPClient.classify`).
final class OutboundURLTests: XCTestCase {
    func testHTTPSToAnyHostAndHTTPToLoopbackAreAccepted() throws {
        let accepted = [
            ("https://api.cloudflare.com/client/v4", "https://api.cloudflare.com/client/v4"),
            ("HTTPS://API.Cloudflare.com/client/v4/", "https://api.cloudflare.com/client/v4"),
            ("https://192.0.2.2:8443", "https://192.0.2.2:8443"),
            ("https://[2001:db8::1]:443/x", "https://[2001:db8::1]:443/x"),
            ("http://127.0.0.1:8787/client/v4", "http://127.0.0.1:8787/client/v4"),
            ("http://127.255.0.9/client/v4", "http://127.255.0.9/client/v4"),
            ("http://localhost:1/", "http://localhost:1"),
            ("http://LocalHost:1/a%2Fb", "http://localhost:1/a%2Fb"),
            ("http://[::1]:8787/client/v4", "http://[::1]:8787/client/v4"),
            ("http://[::ffff:127.0.0.1]:8787", "http://[::ffff:127.0.0.1]:8787"),
            ("http://[0:0:0:0:0:0:0:1]", "http://[0:0:0:0:0:0:0:1]"),
        ]
        for (input, text) in accepted {
            XCTAssertEqual(try OutboundURL(input, variable: "X").text, text, input)
        }
        XCTAssertEqual(try OutboundURL("https://h/p?a=1", variable: "X").query, "a=1")
    }

    /// The red team's forms: each would send `Authorization: Bearer` in the clear to 192.0.2.2 past a prefix check.
    func testUserinfoAndIPv6FormsCannotSmuggleAnotherHostPastTheLoopbackRule() {
        let refused: [(String, String)] = [
            ("http://localhost:1@192.0.2.2:8787/client/v4", "user name or password"),
            ("http://127.0.0.1:x@192.0.2.2:8787/client/v4", "user name or password"),
            ("http://127.0.0.1@192.0.2.2/client/v4", "user name or password"),
            ("https://user:secret-pass@api.cloudflare.com/client/v4", "user name or password"),
            ("http://[::ffff:192.0.2.2]:8787/client/v4", "not this machine"),
            ("http://[::ffff:c000:202]:8787/client/v4", "not this machine"),
            ("http://[::127.0.0.1]/client/v4", "not this machine"),
            ("http://[::]/client/v4", "not this machine"),
            ("http://[fe80::1%25eth0]/client/v4", "percent-encoded host"),
            ("http://[::1/client/v4", "closing ]"),
            ("http://[192.0.2.2]/client/v4", "IPv6 address that is not one"),
            ("http://192.0.2.2:8787/client/v4", "not this machine"),
            ("http://127.0.0.1.example.com/client/v4", "not this machine"),
            ("http://localhost.example.com/", "not this machine"),
            ("http://%31%32%37.0.0.1/client/v4", "percent-encoded host"),
            ("http://127.1/client/v4", "four decimal numbers"),
            ("http://0177.0.0.1/client/v4", "four decimal numbers"),
            ("http://2130706433/client/v4", "four decimal numbers"),
            ("http://127.0.0.1\\@192.0.2.2/", "backslash"),
            ("http://127.0.0.1 /", "white space"),
            ("http://127.0.0.1:0/", "port"),
            ("http://127.0.0.1:65536/", "port"),
            ("http://127.0.0.1:/", "port"),
            ("http://127.0.0.1:80:81/", "port"),
            ("http://127.0.0.1/a#b", "fragment"),
            ("http://127.0.0.1/a%zz", "%XX"),
            ("ftp://127.0.0.1/", "not an http"),
            ("127.0.0.1:8787", "not an http"),
            ("http:///client/v4", "no host"),
            ("http://exämple.com/", "non-ASCII"),
        ]
        for (input, words) in refused {
            XCTAssertThrowsError(try OutboundURL(input, variable: "SOME_BASE_URL"), input) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("SOME_BASE_URL ("), text)
                XCTAssertTrue(text.contains(words), "\(input): \(text)")
                for secret in ["secret-pass", "localhost:1@", ":x@", "user:"] { XCTAssertFalse(text.contains(secret), "\(input): \(text)") }
            }
        }
    }

    func testARefusalNamesTheInputWithoutCredentialsOrQuery() {
        XCTAssertEqual(OutboundURL.redacted("https://user:pw@host/x"), "https://…@host/x")
        XCTAssertEqual(OutboundURL.redacted("http://u:p/w@host/x"), "http://…@host/x")
        XCTAssertEqual(OutboundURL.redacted("https://host/x?token=abc"), "https://host/x?…")
        XCTAssertEqual(OutboundURL.redacted("https://host/x"), "https://host/x")
    }

    func testD1LocationRefusesTheBypassFormsAndKeepsTheCheckedBase() throws {
        let store = "d1://0123456789abcdef0123456789abcdef/9f1c0e2a-1111-4222-8333-444455556666"
        for base in ["http://localhost:1@192.0.2.2:8787/client/v4", "http://127.0.0.1:x@192.0.2.2:8787/client/v4",
                     "http://[::ffff:192.0.2.2]:8787/client/v4", "http://[:/client/v4", "https://h/client/v4?x=1"] {
            XCTAssertThrowsError(try D1Location(uri: store, environment: [D1Location.baseURLVariable: base]), base) { error in
                XCTAssertEqual((error as? D1Error)?.kind, .configuration, base)
                XCTAssertTrue("\(error)".contains(D1Location.baseURLVariable), "\(error)")
            }
        }
        let local = try D1Location(uri: store, environment: [D1Location.baseURLVariable: "http://[::1]:8787/client/v4/"])
        XCTAssertEqual(local.baseURL, "http://[::1]:8787/client/v4")
        XCTAssertEqual(try D1Location(uri: store, environment: [:]).baseURL, D1Location.defaultBaseURL)
    }

    /// Only what happens before any byte of the request is sent counts as not sent; a malformed status line (curl's
    /// 1 and 8), an HTTP/2 stream error (16, 92), a cut answer or a timeout on a made connection may follow the request.
    func testOnlyFailuresBeforeTheRequestLeftCountAsNotSent() {
        func failure(_ code: Int32, connected: Bool = true) -> HTTPFailure {
            HTTPClient.classify(code: code, words: "curl's words", timeout: 10, limit: 1 << 20, connected: connected)
        }
        for code: Int32 in [5, 6, 7, 35, 60, 77] {
            XCTAssertFalse(failure(code).mayHaveBeenSent, "curl error \(code)")
        }
        XCTAssertFalse(failure(28, connected: false).mayHaveBeenSent, "a connect timeout")
        for code: Int32 in [1, 8, 16, 18, 52, 55, 56, 92, 28, 3, 43, 99] {
            XCTAssertTrue(failure(code).mayHaveBeenSent, "curl error \(code)")
        }
        XCTAssertEqual(failure(23), .answerTooLarge(limit: 1 << 20))
        XCTAssertEqual(failure(63), .answerTooLarge(limit: 1 << 20))
    }

    /// A URL the rule refuses is not sent at all, whoever builds the request.
    func testHTTPClientRefusesAPlainHTTPURLToAnotherHostBeforeConnecting() {
        let started = Date()
        XCTAssertThrowsError(try HTTPClient.send(HTTPRequest(url: "http://localhost:1@192.0.2.2:9/x", headers: ["Authorization: Bearer t"], timeout: 5))) { error in
            guard let failure = error as? HTTPFailure, case .unreachable(let why) = failure else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("user name or password"), why)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
    }
}
