import XCTest
import Foundation
@testable import Storage

/// The throw-away cluster ops/test starts (ops/lib/postgres.sh): its URI, its password role, fresh connections.
enum TestPostgres {
    /// `GATEHOUSE_TEST_PG_URI`, or a skip that says how to get one.
    static func uri() throws -> PostgresURI {
        guard let text = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !text.isEmpty else {
            throw XCTSkip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres for these tests")
        }
        return try PostgresURI(text)
    }

    static func connect() throws -> PostgresConnection {
        try PostgresConnection(uri: uri())
    }

    /// The role that must log in with a password, and its password (random per ops/test run).
    static func passwordRole() throws -> (user: String, password: String) {
        let environment = ProcessInfo.processInfo.environment
        guard let user = environment["GATEHOUSE_TEST_PG_PASSWORD_USER"], let password = environment["GATEHOUSE_TEST_PG_PASSWORD"] else {
            throw XCTSkip("GATEHOUSE_TEST_PG_PASSWORD is not set: run ops/test, which starts a throw-away Postgres for these tests")
        }
        return (user, password)
    }

    /// The test cluster's URI for `user`, with `password` in it when given.
    static func uri(user: String, password: String?) throws -> String {
        let base = try uri()
        var text = "postgresql://" + PostgresURI.percentEncode(user, allowed: PostgresURI.unreservedBytes)
        if let password { text += ":" + PostgresURI.percentEncode(password, allowed: PostgresURI.unreservedBytes) }
        text += "@/" + (base.database ?? "")
        var query: [String] = []
        if let host = base.host { query.append("host=" + PostgresURI.percentEncode(host, allowed: PostgresURI.queryValueBytes)) }
        if let port = base.port { query.append("port=" + port) }
        return text + "?" + query.joined(separator: "&")
    }

    /// A table name no other test (or other run sharing the cluster) uses.
    static func uniqueTable(_ stem: String) -> String {
        "\(stem)_\(UInt32.random(in: .min ... .max))"
    }
}

/// Runs `body` with `name` set in the environment (libpq reads PGPASSWORD when it connects), then unsets it.
func withEnvironment<T>(_ name: String, _ value: String, _ body: () throws -> T) rethrows -> T {
    setenv(name, value, 1)
    defer { unsetenv(name) }
    return try body()
}

/// Every text a caller could see of an error: its description, its message, and Swift's own rendering.
func visibleTexts(of error: Error) -> [String] {
    var texts = [String(describing: error), "\(error)", String(reflecting: error), error.localizedDescription]
    if let error = error as? PostgresError { texts += [error.message, error.hint ?? "", error.sql ?? "", error.store ?? ""] }
    return texts
}
