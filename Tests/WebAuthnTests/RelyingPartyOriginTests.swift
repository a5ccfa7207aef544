import WebAuthn
import XCTest

/// The relying party made from the console's origin: the RP id is its host, the origin serialised as browsers do.
final class RelyingPartyOriginTests: XCTestCase {
    func testTheOriginIsKeptAsBrowsersSerialiseIt() throws {
        let cases: [(String, String, String)] = [
            ("https://console.example.com", "console.example.com", "https://console.example.com"),
            ("https://Console.Example.COM:443/", "console.example.com", "https://console.example.com"),
            ("https://console.example.com:8443", "console.example.com", "https://console.example.com:8443"),
            ("http://localhost:8080", "localhost", "http://localhost:8080"),
            ("http://gatehouse.localhost", "gatehouse.localhost", "http://gatehouse.localhost"),
        ]
        for (text, id, origin) in cases {
            let rp = try RelyingParty(origin: text, name: "Gatehouse")
            XCTAssertEqual(rp.id, id, text)
            XCTAssertEqual(rp.origin, origin, text)
            XCTAssertEqual(rp.userVerification, .preferred)
            XCTAssertEqual(rp.algorithms, [.es256, .rs256])
        }
    }

    func testWhatCannotBeAnRPIsRefusedWithTheReason() {
        let cases: [(String, RelyingPartyOriginError)] = [
            ("http://127.0.0.1:8080", .ipAddress("http://127.0.0.1:8080")),
            ("https://[::1]:8443", .ipAddress("https://[::1]:8443")),
            ("http://console.example.com", .insecureScheme("http://console.example.com")),
            ("ftp://console.example.com", .insecureScheme("ftp://console.example.com")),
            ("https://console.example.com/console", .notJustAnOrigin("https://console.example.com/console")),
            ("https://console.example.com/?a=1", .notJustAnOrigin("https://console.example.com/?a=1")),
            ("https://admin@console.example.com", .notJustAnOrigin("https://admin@console.example.com")),
            ("console.example.com", .notAnOrigin("console.example.com")),
            ("", .notAnOrigin("")),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try RelyingParty(origin: text, name: "Gatehouse"), text) {
                XCTAssertEqual($0 as? RelyingPartyOriginError, expected, text)
            }
        }
        XCTAssertTrue(RelyingPartyOriginError.ipAddress("http://127.0.0.1:8080").description.contains("http://localhost:PORT"))
    }
}
