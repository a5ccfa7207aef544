import XCTest
final class GatehouseTestsPlaceholder: XCTestCase { func testBuilds() {} }
