import XCTest
final class ConsoleTestsPlaceholder: XCTestCase { func testBuilds() {} }
