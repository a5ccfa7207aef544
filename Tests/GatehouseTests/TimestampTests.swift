@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

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
        // Postgres's ISO output: a whole-hour offset without minutes.
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02 03:04:05.678+00")?.milliseconds, 1_735_787_045_678)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02 05:04:05.678+02")?.milliseconds, 1_735_787_045_678)
        XCTAssertEqual(Timestamp(iso8601: "2025-01-02 00:34:05.678-0230")?.milliseconds, 1_735_787_045_678)
        for bad in ["", "2025", "2025-13-01", "2025-01-02T25:00", "2025-01-02T03:04:05.Z", "2025-01-02T03:04:05Zjunk", "２０２５-01-02",
                    "2025-01-02 03:04:05+0", "2025-01-02 03:04:05+00:", "2025-01-02 03:04:05+00:0", "2025-01-02 03:04:05+001", "2025-01-02 03:04:05+"] {
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

    /// Arithmetic on times saturates instead of trapping; durations stop at 100 years; dirt in a date column
    /// (a REAL of 1e300, Int64's edges, a year past 9999) reads as no date.
    func testExtremesNeitherTrapNorWrap() throws {
        let now = Timestamp(milliseconds: 1_764_000_000_000)
        XCTAssertEqual(now.adding(seconds: .max).milliseconds, .max)
        XCTAssertLessThan(now.adding(seconds: .min), Timestamp.earliest)
        XCTAssertLessThan(now.adding(seconds: -9_223_372_036_854_776), Timestamp.earliest)
        XCTAssertEqual(Timestamp(milliseconds: -1).adding(seconds: .min).milliseconds, .min)
        XCTAssertEqual(Timestamp(seconds: .max).milliseconds, .max)
        XCTAssertEqual(Timestamp(seconds: .min).milliseconds, .min)
        XCTAssertFalse(Timestamp(seconds: .max).isRepresentable)
        XCTAssertEqual(Timestamp.latest.iso8601, "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(Timestamp.earliest.iso8601, "0000-01-01T00:00:00.000Z")
        XCTAssertEqual(try Seconds.parse("36600d"), Seconds.maximum)
        for bad in ["36601d", "200000000000d", "9223372036854776s", "9223372036854775807", "3162240001"] {
            XCTAssertThrowsError(try Seconds.parse(bad), bad)
        }
        for claim in [1e16, -1e16, 1e308, -1e308, .infinity, .nan, 9.3e18] {
            XCTAssertNil(Timestamp(epochSeconds: claim), "\(claim)")
        }
        XCTAssertEqual(Timestamp(epochSeconds: 1_764_000_000.9), Timestamp(milliseconds: 1_764_000_000_900))
        for dirt: SQLValue in [.real(1e300), .real(-1e300), .real(.nan), .integer(.max), .integer(.min), .text("9223372036854775807"), .real(9.3e18)] {
            XCTAssertNil(DateEncoding.decode(dirt), "\(dirt)")
        }
        XCTAssertEqual(DateEncoding.decode(.real(1_735_787_045.0)), Timestamp(seconds: 1_735_787_045))
    }
}
