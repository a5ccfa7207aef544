@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The duplicates scan's spill sorter: the same order as an in-memory sort whether it spills or not, records longer
/// than its read buffers, and a clear error when the temporary folder cannot be written.
final class ExternalSorterTests: XCTestCase {
    private func records(_ count: Int) -> [(ExternalSorter.Key, [UInt64])] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { n in
            // Few distinct first parts, so that the later parts decide; payloads from empty to 20,000 keys (160 kB).
            let length = n % 997 == 0 ? 20_000 : Int.random(in: 0...6, using: &generator)
            return (ExternalSorter.Key(UInt64.random(in: 0...9, using: &generator), UInt64.random(in: 0...3, using: &generator), UInt64(n)),
                    (0..<length).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) })
        }
    }

    func testSpilledAndInMemoryOrdersMatchASort() throws {
        let input = records(20_000)
        let expected = input.sorted { $0.0 < $1.0 }
        for budget in [1 << 16, 1 << 30] { // dozens of runs, and none
            let sorter = ExternalSorter(budgetBytes: budget)
            for (key, payload) in input {
                try sorter.append(key) { writer in
                    writer.u32(UInt32(payload.count))
                    for value in payload { writer.u64(value) }
                }
            }
            XCTAssertEqual(sorter.count, input.count)
            let stream = try sorter.sorted()
            var output: [(ExternalSorter.Key, [UInt64])] = []
            while let record = try stream.next({ key, reader in (key, (0..<Int(reader.u32())).map { _ in reader.u64() }) }) { output.append(record) }
            XCTAssertEqual(output.map(\.0), expected.map(\.0), "budget \(budget)")
            XCTAssertEqual(output.map(\.1), expected.map(\.1), "budget \(budget)")
            XCTAssertNil(try stream.next { key, _ in key }, "the end stays the end")
        }
    }

    func testAnUnwritableTemporaryFolderIsAClearError() throws {
        let old = ProcessInfo.processInfo.environment["TMPDIR"]
        setenv("TMPDIR", "/nonexistent-gatehouse-folder", 1)
        defer { if let old { setenv("TMPDIR", old, 1) } else { unsetenv("TMPDIR") } }
        let sorter = ExternalSorter(budgetBytes: 1 << 16)
        XCTAssertThrowsError(try { for n in 0..<10_000 { try sorter.append(ExternalSorter.Key(UInt64(n), 0, 0)) { $0.u64(1) } } }()) { error in
            let failure = error as? GatehouseError
            XCTAssertEqual(failure?.message, "cannot make a temporary file in /nonexistent-gatehouse-folder: No such file or directory")
            XCTAssertTrue(failure?.fix?.contains("TMPDIR") ?? false)
        }
    }
}
