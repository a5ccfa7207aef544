@testable import SQLiteEngine
import XCTest

/// How the integrity sweep reads an index's key terms, to probe an index on an expression with that expression.
/// The sweep itself: HealthSweepResumeTests.
final class RowidRangeCheckTests: XCTestCase {
    func testTheKeyTermsOfAnIndexAreReadFromItsDefinition() {
        XCTAssertEqual(RowidRangeCheck.keyTerms(ofIndex: #"CREATE INDEX i ON "account" (substr("refreshToken", 1, 16), "id" DESC)"#),
                       [#"substr("refreshToken", 1, 16)"#, #""id""#])
        XCTAssertEqual(RowidRangeCheck.keyTerms(ofIndex: "CREATE INDEX i ON t (lower(a || ',)'), b COLLATE NOCASE ASC) WHERE c > 0"),
                       ["lower(a || ',)')", "b COLLATE NOCASE"])
        XCTAssertNil(RowidRangeCheck.keyTerms(ofIndex: "CREATE INDEX i ON t (a,"))
        XCTAssertNil(RowidRangeCheck.keyTerms(ofIndex: "not an index"))
    }
}
