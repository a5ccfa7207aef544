@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A database of its own on the throw-away Postgres cluster ops/test starts (`GATEHOUSE_TEST_PG_URI`), for one test;
/// `drop()` removes it.
final class PostgresTestDatabase {
    let admin: PostgresConnection
    let name: String
    /// The database's URI, as `--store` takes it.
    let uri: String

    /// A new database named `prefix` and a random number; nil when no cluster was started for the tests.
    static func ifAvailable(_ prefix: String) throws -> PostgresTestDatabase? {
        guard let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !base.isEmpty else { return nil }
        return try PostgresTestDatabase(prefix, base: base)
    }

    /// A new database, or the test skipped when no cluster was started for the tests.
    static func make(_ prefix: String) throws -> PostgresTestDatabase {
        guard let database = try ifAvailable(prefix) else {
            throw XCTSkip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres for these tests")
        }
        return database
    }

    private init(_ prefix: String, base: String) throws {
        admin = try PostgresConnection(uri: PostgresURI(base))
        name = "\(prefix)_\(UInt32.random(in: .min ... .max))"
        try admin.executeScript("CREATE DATABASE \(name)")
        uri = base.replacingOccurrences(of: "/gatehouse_test?", with: "/\(name)?")
        setenv("GATEHOUSE_KEY_DIR", NSTemporaryDirectory() + "gatehouse-test-keys", 1)
    }

    func drop() {
        try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
