import XCTest
@testable import Gatehouse

/// The parts of notification handling that need no signed token: Apple's body shape, its event-type spellings, and
/// the `Cache-Control` reading that decides how long Apple's keys are kept. Signed notifications are tested end to
/// end against Tests/Fixtures/apple_server.py (AppleNotificationsTests).
final class AppleNotificationParsingTests: XCTestCase {
    func testBodyMustBeApplesShape() throws {
        XCTAssertEqual(try AppleNotificationVerifier.payload(of: Array(#"{"payload": "a.b.c"}"#.utf8)), "a.b.c")
        for body in ["", "garbage", "[]", #"{"payload": 1}"#, #"{"payload": ""}"#, #"{"signedPayload": "a.b.c"}"#] {
            XCTAssertThrowsError(try AppleNotificationVerifier.payload(of: Array(body.utf8)), body) { error in
                XCTAssertTrue((error as? AppleNotificationRefusal)?.malformedBody == true, body)
            }
        }
    }

    func testEventTypesIncludeBothSpellingsOfAccountDelete() {
        XCTAssertEqual(AppleNotification.EventType(apple: "account-delete"), .accountDelete)
        XCTAssertEqual(AppleNotification.EventType(apple: "account-deleted"), .accountDelete)
        XCTAssertEqual(AppleNotification.EventType(apple: "email-disabled"), .emailDisabled)
        XCTAssertNil(AppleNotification.EventType(apple: "EMAIL-DISABLED"))
    }

    func testCacheControlMaxAge() {
        XCTAssertEqual(AppleKeySource.maxAge("max-age=3600"), 3600)
        XCTAssertEqual(AppleKeySource.maxAge("public, max-age=\"600\""), 600)
        XCTAssertEqual(AppleKeySource.maxAge("Max-Age = 60 , public"), 60)
        XCTAssertNil(AppleKeySource.maxAge("no-store, max-age=3600"))
        XCTAssertNil(AppleKeySource.maxAge("no-cache"))
        XCTAssertNil(AppleKeySource.maxAge(nil))
        XCTAssertEqual(AppleKeySource.maxAge("max-age=-5"), 0)
    }

    func testFormEncodingEscapesEverythingButUnreserved() {
        XCTAssertEqual(AppleHTTPClient.formEncode([("client_id", "com.example.web"), ("token", "a+b/c=d&e f")]),
                       "client_id=com.example.web&token=a%2Bb%2Fc%3Dd%26e%20f")
    }
}
