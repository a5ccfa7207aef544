import XCTest
@testable import Gatehouse
import Storage

final class TimestampTests: XCTestCase {
    func testFormatsLikeJavaScriptToISOString() {
        XCTAssertEqual(Timestamp(milliseconds: 0).iso8601, "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamp(milliseconds: 1_735_787_045_678).iso8601, "2025-01-02T03:04:05.678Z")
        XCTAssertEqual(Timestamp(milliseconds: 951_782_400_000).iso8601, "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(Timestamp(milliseconds: -1).iso8601, "1969-12-31T23:59:59.999Z")
    }

    func testParsesTheFormsStoresHold() {
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02T03:04:05.678Z")?.milliseconds, 1_735_787_045_678)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02 03:04:05")?.milliseconds, 1_735_787_045_000)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02T04:04:05.678+01:00")?.milliseconds, 1_735_787_045_678)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02T03:04:05.6789123Z")?.milliseconds, 1_735_787_045_678)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02")?.milliseconds, 1_735_776_000_000)
        for bad in ["", "2025", "2025-13-01", "2025-01-02T25:00", "2025-01-02T03:04:05.Z", "2025-01-02T03:04:05Zjunk", "２０２５-01-02"] {
            XCTAssertNil(Timestamp(iso8601: bad), bad)
        }
    }

    func testRoundTripsAcrossCenturies() {
        for ms in stride(from: Int64(-2_000_000_000_000), to: 4_000_000_000_000, by: 123_456_789_013) {
            XCTAssertEqual(Timestamp(iso8601: Timestamp(milliseconds: ms).iso8601)?.milliseconds, ms)
        }
    }

    func testDateEncodingsReadAllThreeForms() {
        let expected = Timestamp(milliseconds: 1_735_787_045_678)
        XCTAssertEqual(DateEncoding.decode(.text("2025-01-02T03:04:05.678Z")), expected)
        XCTAssertEqual(DateEncoding.decode(.integer(1_735_787_045_678)), expected)
        XCTAssertEqual(DateEncoding.decode(.integer(1_735_787_045)), Timestamp(seconds: 1_735_787_045))
        XCTAssertNil(DateEncoding.decode(.null))
        XCTAssertEqual(DateEncoding.epochSeconds.encode(expected), .integer(1_735_787_045))
        XCTAssertEqual(DateEncoding.epochMilliseconds.encode(expected), .integer(1_735_787_045_678))
        XCTAssertEqual(DateEncoding.isoText.encode(expected), .text("2025-01-02T03:04:05.678Z"))
    }

    func testDurations() throws {
        XCTAssertEqual(try Seconds.parse("90").value, 90)
        XCTAssertEqual(try Seconds.parse("15m").value, 900)
        XCTAssertEqual(try Seconds.parse("1h30m").value, 5400)
        XCTAssertEqual(try Seconds.parse("2w").value, 1_209_600)
        XCTAssertEqual(Seconds(5400).description, "1h30m")
        for bad in ["", "h", "1x", "-5", "1h-", "99999999999999999999d", "1.5h"] {
            XCTAssertThrowsError(try Seconds.parse(bad), bad)
        }
    }
}
