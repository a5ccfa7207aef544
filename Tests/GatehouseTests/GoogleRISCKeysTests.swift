@testable import Gatehouse
import XCTest

/// What Google's RISC keys cost Google: while its discovery document cannot be had, tokens are answered "try later"
/// (`GoogleRISCKeys.Unavailable`) with one request a minute, not one a token. Fetching, caching and the refetch on an
/// unknown kid are tested end to end against Tests/Fixtures/google_server.py (GoogleRISCTests).
final class GoogleRISCKeysTests: XCTestCase {
    func testAFailedFetchIsNotTriedAgainWithinAMinute() {
        let keys = GoogleRISCKeys(baseURL: "http://127.0.0.1:1", timeout: 2)
        let start = Timestamp(seconds: 1_800_000_000)
        for (seconds, unknownKeyID) in [(0, false), (1, false), (30, true), (59, false)] as [(Int64, Bool)] {
            XCTAssertThrowsError(try keys.configuration(now: start.adding(seconds: seconds), unknownKeyID: unknownKeyID)) {
                XCTAssertTrue($0 is GoogleRISCKeys.Unavailable, "\($0)")
            }
        }
        XCTAssertEqual(keys.fetchAttempts.value, 1, "one request while Google cannot be reached, however many tokens")
        XCTAssertThrowsError(try keys.configuration(now: start.adding(seconds: 60)))
        XCTAssertEqual(keys.fetchAttempts.value, 2, "a minute later, Google is asked again")
    }
}
