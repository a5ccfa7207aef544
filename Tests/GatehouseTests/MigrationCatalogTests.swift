import XCTest
import JOSE
@testable import Gatehouse

/// The migration catalog reads and checksums the shipped files (with SHA256.Portable); store paths and file status.
final class MigrationCatalogTests: XCTestCase {
    func testAgreesWithOpenSSLOnTheShippedMigrations() throws {
        let directory = try ResourceLocator.migrationsDirectory()
        let catalog = try MigrationCatalog.load(directory: directory)
        XCTAssertFalse(catalog.migrations.isEmpty)
        for migration in catalog.migrations {
            let data = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/" + migration.name + ".sql"))
            XCTAssertEqual(migration.checksum, SHA256.hex(Array(data)), migration.name)
        }
    }

    func testUnlessTableDirectiveIsTrimmedLikeBefore() {
        XCTAssertEqual(MigrationCatalog.trimmingSpaces(" \tuser \t"), "user")
        XCTAssertEqual(MigrationCatalog.trimmingSpaces("users"), "users")
        XCTAssertEqual(MigrationCatalog.trimmingSpaces("   "), "")
        XCTAssertEqual(MigrationCatalog.trimmingSpaces("a b"), "a b")
    }

    func testMigrationTextMustBeUTF8() throws {
        XCTAssertEqual(MigrationCatalog.utf8Text(Array("SELECT 'é';".utf8)), "SELECT 'é';")
        XCTAssertNil(MigrationCatalog.utf8Text([0x53, 0xFF, 0x45]))
        XCTAssertNil(MigrationCatalog.utf8Text([0xC3]))
        let dir = NSTemporaryDirectory() + "gh-migrations-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data([0x2D, 0x2D, 0x20, 0xFF]).write(to: URL(fileURLWithPath: dir + "/0001_first.sql"))
        XCTAssertThrowsError(try MigrationCatalog.load(directory: dir)) { XCTAssertTrue("\($0)".contains("UTF-8"), "\($0)") }
        XCTAssertNil(MigrationCatalog.sqlFileNames(in: dir + "/absent"))
        XCTAssertEqual(MigrationCatalog.sqlFileNames(in: dir), ["0001_first.sql"])
    }
}

/// The path helpers that replaced Foundation's URL on the store-opening path.
final class StorePathTests: XCTestCase {
    func testDirectoryOfAStorePath() {
        XCTAssertEqual(FileStatus.directory(of: "/srv/gh/auth.sqlite"), "/srv/gh")
        XCTAssertEqual(FileStatus.directory(of: "/auth.sqlite"), "/")
        XCTAssertEqual(FileStatus.directory(of: "/srv/gh/"), "/srv")
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertEqual(FileStatus.directory(of: "auth.sqlite"), cwd)
        XCTAssertEqual(FileStatus.directory(of: "data/auth.sqlite"), (cwd == "/" ? "" : cwd) + "/data")
    }

    func testParent() {
        XCTAssertEqual(ResourceLocator.parent(of: "/a/b"), "/a")
        XCTAssertEqual(ResourceLocator.parent(of: "/a"), "/")
        XCTAssertEqual(ResourceLocator.parent(of: "/"), "/")
    }

    func testFileStatus() throws {
        XCTAssertEqual(FileStatus("/")?.isDirectory, true)
        XCTAssertNil(FileStatus("/nonexistent/gatehouse-\(UUID().uuidString)"))
        let path = NSTemporaryDirectory() + "gh-status-\(UUID().uuidString)"
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(FileStatus(path)?.size, 100)
        XCTAssertEqual(FileStatus(path)?.isDirectory, false)
        XCTAssertTrue(FileStatus.isReadable(path))
    }
}
