@testable import Console
@testable import D1Engine
import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The console serves the binary's own copy of Public/ exactly as it serves the folder.
final class StaticFilesEmbeddedTests: XCTestCase {
    func testEmbeddedPublicServesTheFoldersFiles() throws {
        let folder = try StaticFiles(directory: ResourceLocator.publicDirectory())
        let embedded = try StaticFiles(directory: ResourceLocator.embeddedRoot + "/Public")
        XCTAssertEqual(embedded.paths, folder.paths)
        XCTAssertTrue(embedded.paths.contains("/"), "index.html is served at /")
        XCTAssertFalse(embedded.paths.contains("/js/pages/README.md"), "only known file types are served")
        for path in folder.paths {
            XCTAssertEqual(embedded.file(for: path)?.body, folder.file(for: path)?.body, path)
            XCTAssertEqual(embedded.file(for: path)?.contentType, folder.file(for: path)?.contentType, path)
        }
    }
}
