@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

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

/// Throw-away databases and schemas on the test cluster, for tests that need a database of their own.
extension TestPostgres {
    /// The test cluster's URI for `database` (the test database when nil), with libpq `options` when given.
    static func uri(database: String? = nil, options: String? = nil) throws -> String {
        let base = try uri()
        var text = "postgresql://" + PostgresURI.percentEncode(base.user ?? "gatehouse", allowed: PostgresURI.unreservedBytes)
        text += "@/" + PostgresURI.percentEncode(database ?? base.database ?? "", allowed: PostgresURI.unreservedBytes)
        var query: [String] = []
        if let host = base.host { query.append("host=" + PostgresURI.percentEncode(host, allowed: PostgresURI.queryValueBytes)) }
        if let port = base.port { query.append("port=" + port) }
        if let options { query.append("options=" + PostgresURI.percentEncode(options, allowed: PostgresURI.unreservedBytes)) }
        return text + "?" + query.joined(separator: "&")
    }

    /// Runs `body` on a connection to a database created for it (its `public` schema empty), then drops it.
    static func withFreshDatabase<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let admin = try connect()
        let name = uniqueTable("gh_db")
        try admin.executeScript("CREATE DATABASE \(name)")
        defer { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let db = try PostgresConnection(uri: uri(database: name))
        return try body(db)
    }

    /// Runs `body` on a connection whose `search_path` is a schema created for it (set through the URI's
    /// `options`, as an operator would), then drops the schema.
    static func withFreshSchema<T>(_ body: (PostgresConnection, String) throws -> T) throws -> T {
        let admin = try connect()
        let schema = uniqueTable("gh_schema")
        try admin.executeScript("CREATE SCHEMA \(schema)")
        defer { try? admin.executeScript("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        let db = try PostgresConnection(uri: uri(options: "-csearch_path=\(schema)"))
        return try body(db, schema)
    }
}
