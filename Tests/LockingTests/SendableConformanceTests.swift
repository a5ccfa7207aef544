import Foundation
import XCTest
import Locking

/// `Locked` and `Monitor` are `Sendable` exactly when their value is: a lock keeps two threads from touching the value
/// at once, but a value that is not `Sendable` (a class with mutable state of its own) may still leave the lock and
/// be used from two threads, so the compiler must refuse to send it.
final class SendableConformanceTests: XCTestCase {
    private static func requireSendable<T: Sendable>(_: T.Type) {}

    /// Compiles only while the conformance holds for `Sendable` values.
    func testLockedAndMonitorOfASendableValueAreSendable() {
        Self.requireSendable(Locked<Int>.self)
        Self.requireSendable(Locked<[String: [Int]]?>.self)
        Self.requireSendable(Monitor<[Int]>.self)
    }

    /// The other half cannot be written as a test that compiles, so it asks the compiler: sending a `Locked` or a
    /// `Monitor` of a non-`Sendable` class is an error in Swift 6, sending one of an `Int` is not.
    func testLockedAndMonitorOfANonSendableValueAreNotSendable() throws {
        let accepted = try typecheck("share(Locked(0)); share(Monitor([1]))")
        XCTAssertEqual(accepted.status, 0, accepted.output)
        for wrapper in ["Locked", "Monitor"] {
            let refused = try typecheck("share(\(wrapper)(Counter()))")
            XCTAssertNotEqual(refused.status, 0, "\(wrapper) of a non-Sendable class must not be Sendable")
            XCTAssertTrue(refused.output.contains("Sendable"), refused.output)
        }
    }

    /// Type-checks `statement` in Swift 6 mode against Locking's own sources.
    private func typecheck(_ statement: String) throws -> (status: Int32, output: String) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources/Locking")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
            .map { sources.appendingPathComponent($0).path }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("locking-sendable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let snippet = directory.appendingPathComponent("snippet.swift")
        try """
            final class Counter { var count = 0 }
            func share(_ value: some Sendable) {}
            func check() { \(statement) }
            """.write(to: snippet, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-module-name", "Snippet"] + files + [snippet.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
