@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines

/// A fresh temporary directory per test, removed afterwards.
final class TestDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
