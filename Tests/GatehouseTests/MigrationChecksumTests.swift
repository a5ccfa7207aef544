import XCTest
import JOSE
@testable import Gatehouse

/// The migration checksum is SHA-256 in plain Swift: checked against FIPS 180-2's published examples and
/// against OpenSSL (through JOSE), including at every length around the padding boundaries.
final class MigrationChecksumTests: XCTestCase {
    func testPublishedVectors() {
        XCTAssertEqual(MigrationChecksum.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(MigrationChecksum.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(MigrationChecksum.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(MigrationChecksum.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testAgreesWithOpenSSLAtEveryLengthUpToThreeBlocks() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(MigrationChecksum.hex(bytes), JOSE.SHA256.hex(bytes), "length \(length)")
        }
    }

    func testAgreesWithOpenSSLOnTheShippedMigrations() throws {
        let directory = try ResourceLocator.migrationsDirectory()
        let catalog = try MigrationCatalog.load(directory: directory)
        XCTAssertFalse(catalog.migrations.isEmpty)
        for migration in catalog.migrations {
            let data = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/" + migration.name + ".sql"))
            XCTAssertEqual(migration.checksum, JOSE.SHA256.hex(Array(data)), migration.name)
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
