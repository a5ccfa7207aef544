import Foundation
import XCTest

/// libmicrohttpd (and GnuTLS behind it) is loaded only by `gatehouse serve`: every other command starts
/// without it. The console's own tests prove that the loaded library serves over real sockets.
final class CLILibraryLoadingTests: XCTestCase {
    func testTheBinaryDoesNotLinkLibmicrohttpd() throws {
        let result = try Tool.start("/usr/bin/ldd", [CLI.binary]).finish()
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.contains("libsqlite3"), result.stdout)
        XCTAssertFalse(result.stdout.contains("libmicrohttpd"), result.stdout)
        XCTAssertFalse(result.stdout.contains("libgnutls"), result.stdout)
    }

    func testServeLoadsLibmicrohttpdWhenItStarts() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try CLI().run(["init", "--store", store]).status, 0)
        let process = try CLI().start(["serve", "--store", store, "--listen", "127.0.0.1:0"])
        var listening = false
        for _ in 0..<100 where !listening {
            Thread.sleep(forTimeInterval: 0.05)
            listening = ((try? String(contentsOf: process.out, encoding: .utf8)) ?? "").contains("http://127.0.0.1:")
        }
        // Read to the end: /proc files report a size of 0, which String(contentsOfFile:) trusts.
        let maps = FileHandle(forReadingAtPath: "/proc/\(process.process.processIdentifier)/maps")
            .flatMap { try? $0.readToEnd() }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        kill(process.process.processIdentifier, SIGTERM)
        let result = try process.finish()
        XCTAssertTrue(listening, result.all)
        XCTAssertTrue(maps.contains("libmicrohttpd.so.12"), "serve maps libmicrohttpd once it listens")
        XCTAssertEqual(result.status, 0, result.all)
    }
}
