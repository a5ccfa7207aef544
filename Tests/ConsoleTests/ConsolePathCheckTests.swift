@testable import Console
@testable import D1Engine
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// `RequestGuard.isPlainPath` scans bytes once; it must refuse exactly what the plain rule refuses.
final class ConsolePathCheckTests: XCTestCase {
    /// The rule written plainly, as the reference.
    static func reference(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.utf8.count <= 2048 else { return false }
        let lowered = path.lowercased()
        for forbidden in ["%2e", "%2f", "%5c", "%00", "\\", "//"] where lowered.contains(forbidden) { return false }
        if path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) { return false }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() where segment == ".." || segment == "." {
            return false
        }
        return true
    }

    func testKnownPaths() {
        for path in ["/", "/index.html", "/api/users/abc", "/a/.../b", "/a/.b", "/a/b.", "/api/users/a%40b.com", "/x%2", "/x%", "/%41"] {
            XCTAssertTrue(RequestGuard.isPlainPath(path), path)
        }
        for path in ["", "a", "/..", "/.", "/a/../b", "/a/./b", "/a/..", "//a", "/a//b", "/a\\b", "/%2e%2e/x", "/%2E", "/%2f", "/%2F",
                     "/%5c", "/%5C", "/%00", "/%%2e", "/%2%2e", "/a\u{1}", "/a\u{7f}", "/" + String(repeating: "a", count: 2048)] {
            XCTAssertFalse(RequestGuard.isPlainPath(path), path)
        }
    }

    func testAgreesWithTheReferenceOnRandomPaths() {
        let alphabet: [Character] = ["/", ".", "%", "2", "5", "0", "e", "E", "f", "F", "c", "C", "a", "\\", "\u{1}", "x"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50_000 {
            let length = Int.random(in: 0...10, using: &generator)
            let path = (Bool.random(using: &generator) ? "/" : "") + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            XCTAssertEqual(RequestGuard.isPlainPath(path), Self.reference(path), path.debugDescription)
        }
    }
}
