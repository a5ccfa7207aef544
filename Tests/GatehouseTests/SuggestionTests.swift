import XCTest
@testable import Gatehouse

/// The one edit distance: its bounded form answers as the full one does within the bound, and nil beyond it.
final class SuggestionTests: XCTestCase {
    func testKnownDistances() {
        XCTAssertEqual(Suggestion.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(Suggestion.editDistance("", "abc"), 3)
        XCTAssertEqual(Suggestion.editDistance("postgres", "postgres"), 0)
        XCTAssertEqual(Suggestion.editDistance("postgress", "postgres", limit: 2), 1)
        XCTAssertEqual(Suggestion.editDistance("psotgres", "postgres", limit: 2), 2)
        XCTAssertNil(Suggestion.editDistance("mysql", "postgres", limit: 2))
        XCTAssertNil(Suggestion.editDistance("pg", "postgresql", limit: 2), "the lengths alone differ by 8")
    }

    func testTheBoundedDistanceAgreesWithTheFullOne() {
        let words = ["", "a", "pg", "psql", "postgres", "postgresql", "postgress", "postgre", "progres", "sqlite",
                     "sqlite3", "mysql", "users", "usres", "merge", "emrge", "kitten", "sitting", "a much longer word"]
        for a in words {
            for b in words {
                let full = Suggestion.editDistance(a, b)
                for limit in 0...4 {
                    XCTAssertEqual(Suggestion.editDistance(a, b, limit: limit), full <= limit ? full : nil, "\(a) / \(b) within \(limit)")
                }
            }
        }
    }
}
