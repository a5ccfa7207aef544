import XCTest
@testable import HTTPServer

/// libmicrohttpd is loaded with dlopen when a server starts; a missing or wrong library is a clear error.
final class MicroHTTPDLoadingTests: XCTestCase {
    func testTheInstalledLibraryLoads() throws {
        _ = try MicroHTTPD.load()
    }

    func testAMissingLibraryIsNamedWithThePackageToInstall() {
        XCTAssertThrowsError(try MicroHTTPD(soname: "libmicrohttpd-absent.so.12")) { error in
            let error = error as? HTTPServerError
            XCTAssertEqual(error?.kind, .libraryUnavailable)
            let message = error?.message ?? ""
            XCTAssertTrue(message.contains("libmicrohttpd-absent.so.12"), message)
            XCTAssertTrue(message.contains("apt-get install libmicrohttpd12"), message)
        }
    }

    func testALibraryWithoutLibmicrohttpdsFunctionsIsRefused() {
        XCTAssertThrowsError(try MicroHTTPD(soname: "libsqlite3.so.0")) { error in
            let message = (error as? HTTPServerError)?.message ?? ""
            XCTAssertTrue(message.contains("lacks MHD_start_daemon"), message)
        }
    }
}
