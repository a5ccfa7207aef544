@testable import D1Engine
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The migration catalog reads and checksums the shipped files (with SHA256.Portable); store paths and file status.
final class MigrationCatalogTests: XCTestCase {
    func testAgreesWithOpenSSLOnTheShippedMigrations() throws {
        for folder in ["sqlite", "postgres"] {
            let directory = try ResourceLocator.migrationsDirectory(for: folder)
            let catalog = try MigrationCatalog.load(directory: directory)
            XCTAssertFalse(catalog.migrations.isEmpty)
            for migration in catalog.migrations {
                let data = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/" + migration.name + ".sql"))
                XCTAssertEqual(migration.checksum, SHA256.hex(Array(data)), migration.name)
            }
        }
    }

    /// Existing stores recorded these checksums: the SQLite files must keep them byte for byte.
    func testSQLiteFilesKeepTheChecksumsExistingStoresRecorded() throws {
        let catalog = try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "sqlite"))
        XCTAssertTrue(catalog.directory.hasSuffix("/migrations/sqlite"), catalog.directory)
        XCTAssertEqual(catalog.migrations.prefix(3).map(\.checksum), [
            "b0a45c9e5fd4a91929ac5f7906c46e26de82ed96c873c2b0544e5d93f9de081c",
            "e5b444158f5305aad73e0c2d3c33307d2fd8a191150f887be439515dd8b2aebb",
            "e52533f39e4750f2eff4955bca6a06138e96c42bcd5f0cc9caa3f82400fb7195",
        ])
    }

    /// Each engine's folder holds the same ids and names, for the same purposes, with the same skip directives.
    func testEnginesShareIdsNamesAndDirectives() throws {
        let sqlite = try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "sqlite"))
        let postgres = try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "postgres"))
        XCTAssertEqual(sqlite.migrations.map(\.id), postgres.migrations.map(\.id))
        XCTAssertEqual(sqlite.migrations.map(\.name), postgres.migrations.map(\.name))
        XCTAssertEqual(sqlite.unlessTable, postgres.unlessTable)
        XCTAssertEqual(postgres.unlessTable, [1: "user", 2: "users"])
        XCTAssertTrue(postgres.directory.hasSuffix("/migrations/postgres"), postgres.directory)
    }

    func testMigrationsVariableNamesTheFolderHoldingBothEngines() throws {
        let root = NSTemporaryDirectory() + "gh-migrations-root-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/sqlite", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root); unsetenv("GATEHOUSE_MIGRATIONS") }
        setenv("GATEHOUSE_MIGRATIONS", root, 1)
        XCTAssertEqual(try ResourceLocator.migrationsDirectory(for: "sqlite"), root + "/sqlite")
        XCTAssertThrowsError(try ResourceLocator.migrationsDirectory(for: "postgres")) {
            XCTAssertTrue("\($0)".contains("has no postgres/ folder"), "\($0)")
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

/// The path helpers the store-opening path uses instead of Foundation's URL.
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
