import XCTest
final class JOSETestsPlaceholder: XCTestCase { func testBuilds() {} }
