import Foundation
import XCTest
@testable import Gatehouse
import Storage

/// A database of its own on the local D1 API server ops/test starts (`GATEHOUSE_TEST_D1_CONTROL`), holding a copy of
/// a SQLite store's rows and master key, as an operator's rows would be there before Gatehouse; the test skips when
/// no server runs.
enum D1TestDatabase {
    /// A new D1 database holding what the SQLite store at `sqlite` holds, opened.
    static func copy(of sqlite: String) throws -> Store {
        let environment = ProcessInfo.processInfo.environment
        guard let control = environment["GATEHOUSE_TEST_D1_CONTROL"], !control.isEmpty, let account = environment["GATEHOUSE_TEST_D1_ACCOUNT"],
              let url = environment["GATEHOUSE_TEST_D1_URL"] else {
            throw XCTSkip("GATEHOUSE_TEST_D1_CONTROL is not set: run ops/test, which starts a local D1 API server for these tests")
        }
        setenv("CLOUDFLARE_API_BASE_URL", url, 1)
        setenv("GATEHOUSE_KEY_DIR", NSTemporaryDirectory() + "gatehouse-test-keys", 1)
        let made = try run("/usr/bin/curl", ["-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{}", control + "/databases"])
        guard let answer = try JSONSerialization.jsonObject(with: Data(made.utf8)) as? [String: Any],
              let id = answer["database"] as? String, let file = answer["file"] as? String else {
            throw XCTSkip("the D1 test server made no database: \(made)")
        }
        _ = try run("/usr/bin/sqlite3", [sqlite, ".backup '\(file)'"])
        // D1 keeps `_cf_KV` in every database; a rollback journal, as the server's own files have.
        _ = try run("/usr/bin/sqlite3", [file, "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;"])
        let uri = "d1://\(account)/\(id)"
        let key = MasterKey.defaultPath(forStore: uri)
        try FileManager.default.createDirectory(atPath: (key as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: sqlite + ".key", toPath: key)
        return try Store.open(path: uri)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw XCTSkip("\(executable) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}
