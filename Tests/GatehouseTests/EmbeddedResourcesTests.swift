@testable import D1Engine
import EmbeddedResources
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The copies of `migrations/` and `Public/` compiled into the binary are the source tree's files, byte for byte,
/// and the migrations read from them carry the checksums stores recorded from the folders.
final class EmbeddedResourcesTests: XCTestCase {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every regular, non-hidden file under `folder` of the source tree, as `folder/relative/path`.
    func sourceFiles(_ folder: String) throws -> [String] {
        let base = Self.packageRoot.appendingPathComponent(folder)
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey],
                                                                      options: [.skipsHiddenFiles]))
        var paths: [String] = []
        for case let url as URL in enumerator where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            paths.append(folder + "/" + url.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1))
        }
        return paths.sorted()
    }

    func testEmbeddedFilesAreTheSourceTreesByteForByte() throws {
        let expected = try sourceFiles("migrations") + sourceFiles("Public")
        XCTAssertEqual(EmbeddedResources.files.map(\.path), expected, "a file added, removed or renamed is embedded at the next build")
        for file in EmbeddedResources.files {
            let disk = try Data(contentsOf: Self.packageRoot.appendingPathComponent(file.path))
            XCTAssertTrue(file.bytes == Array(disk), "\(file.path): the embedded copy differs from the file (\(file.bytes.count) against \(disk.count) bytes)")
        }
        XCTAssertTrue(expected.contains("migrations/sqlite/0001_better_auth_core.sql"))
        XCTAssertTrue(expected.contains("Public/index.html"))
    }

    func testEmbeddedMigrationsLoadWithTheFoldersChecksums() throws {
        for folderName in ["sqlite", "postgres"] {
            let folder = try MigrationCatalog.load(directory: Self.packageRoot.appendingPathComponent("migrations/\(folderName)").path)
            let embedded = try MigrationCatalog.load(directory: ResourceLocator.embeddedRoot + "/migrations/\(folderName)")
            XCTAssertEqual(embedded.migrations.map(\.name), folder.migrations.map(\.name), folderName)
            XCTAssertEqual(embedded.migrations.map(\.checksum), folder.migrations.map(\.checksum), folderName)
            XCTAssertEqual(embedded.migrations.map(\.sql), folder.migrations.map(\.sql), folderName)
            XCTAssertEqual(embedded.unlessTable, folder.unlessTable, folderName)
        }
        // The checksums existing stores recorded (MigrationCatalogTests) hold for the copies too.
        let sqlite = try MigrationCatalog.load(directory: ResourceLocator.embeddedRoot + "/migrations/sqlite")
        XCTAssertEqual(sqlite.migrations.first?.checksum, "b0a45c9e5fd4a91929ac5f7906c46e26de82ed96c873c2b0544e5d93f9de081c")
        XCTAssertEqual(sqlite.migrations.first.map { SHA256.hex(Array($0.sql.utf8)) }, sqlite.migrations.first?.checksum)
    }

    func testAFolderWithoutMigrationsIsNamedInTheError() {
        XCTAssertThrowsError(try MigrationCatalog.load(directory: ResourceLocator.embeddedRoot + "/migrations/none")) {
            XCTAssertTrue("\($0)".contains("(embedded)/migrations/none holds no .sql files"), "\($0)")
        }
    }

    func testBuildInfoNamesACommitAndADate() {
        let commit = GatehouseVersion.commit
        XCTAssertTrue(commit == "unknown" || (commit.count == 40 && commit.allSatisfy(\.isHexDigit)), commit)
        let date = GatehouseVersion.buildDate
        XCTAssertTrue(date == "unknown" || date.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression) != nil, date)
    }
}
