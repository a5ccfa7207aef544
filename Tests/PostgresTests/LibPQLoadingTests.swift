@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// libpq is loaded with dlopen when the first Postgres connection is made, never linked; a missing or wrong library
/// is one clear line naming the Debian package.
final class LibPQLoadingTests: XCTestCase {
    func testTheInstalledLibraryLoads() throws {
        let pq = try LibPQ.load()
        XCTAssertGreaterThanOrEqual(pq.libVersion(), 100000, "libpq 10 or later")
    }

    func testAMissingLibraryNamesTheDebianPackage() {
        XCTAssertThrowsError(try LibPQ(soname: "libpq-gatehouse-missing.so.5")) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .library)
            XCTAssertTrue(error.message.hasPrefix("A Postgres store needs libpq (libpq-gatehouse-missing.so.5), which could not be loaded: "), error.message)
            XCTAssertTrue(error.message.hasSuffix("Install it: apt-get install libpq5."), error.message)
            XCTAssertEqual(error.description, error.message)
            XCTAssertFalse(error.description.contains("\n"))
        }
    }

    func testALibraryWithoutLibpqsFunctionsIsRefused() {
        XCTAssertThrowsError(try LibPQ(soname: "libsqlite3.so.0")) { error in
            let message = (error as? PostgresError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("needs a libpq with PQlibVersion, which libsqlite3.so.0 lacks"), message)
            XCTAssertTrue(message.contains("libpq5"), message)
        }
    }

    /// The product needs only libsqlite3, libcrypto and libmicrohttpd (the last one loaded with dlopen too).
    func testTheBinaryDoesNotLinkLibpq() throws {
        guard let binary = ProcessInfo.processInfo.environment["GATEHOUSE_BIN"], FileManager.default.fileExists(atPath: binary) else {
            throw XCTSkip("GATEHOUSE_BIN is not set: run ops/test, which builds the gatehouse binary first")
        }
        guard let readelf = ["/usr/bin/readelf", "/usr/bin/objdump"].first(where: FileManager.default.isExecutableFile) else {
            throw XCTSkip("neither readelf nor objdump is installed")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: readelf)
        process.arguments = readelf.hasSuffix("readelf") ? ["-d", binary] : ["-p", binary]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let needed = text.split(separator: "\n").filter { $0.contains("NEEDED") }
        XCTAssertFalse(needed.isEmpty, "no NEEDED entries read from \(binary)")
        XCTAssertTrue(needed.contains { $0.contains("libsqlite3") }, "\(needed)")
        XCTAssertFalse(needed.contains { $0.contains("libpq") }, "\(needed)")
    }
}
