@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A split identity written into a store of any shape, through `AuthSchema`: U1 (Apple, relay email)
/// and U2 (Google, real email), each with accounts, sessions, a sync users row, workspaces, a
/// subscription and roles as a test asks.
struct MergeScenario {
    let store: Store
    let u1: String
    let u2: String
    var u1Sub: String { "better_auth|" + u1 }
    var u2Sub: String { "better_auth|" + u2 }
    let u1Email = "zq7merge01@privaterelay.appleid.com"
    let u2Email = "ana.merge@gmail.com"

    /// The three shapes: a fresh Better Auth 1.7 store, a Better Auth 1.5 database, a Drizzle (snake_case, epoch ms) database.
    static let shapes: [String?] = [nil, "better-auth-1.5.sql", "drizzle-ms.sql"]

    static func store(_ scratch: Scratch, shape fixture: String?, name: String = "store.sqlite") throws -> Store {
        let path = scratch.path((fixture ?? "fresh") + "-" + name)
        if let fixture { try Fixtures.database(fixture, at: path) }
        return try Store.initialize(path: path, actor: tester).0
    }

    init(store: Store, u1: String = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2: String = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
         sessions: Int = 2, workspaces: Int = 1, u1Sync: Bool = true, u2Sync: Bool = true) throws {
        self.store = store
        self.u1 = u1
        self.u2 = u2
        let created = Timestamp(iso8601: "2025-03-01T10:00:00.000Z")!
        try store.db.write {
            try insertUser(u1, email: u1Email, created: created)
            try insertUser(u2, email: u2Email, created: created.adding(seconds: 86_400 * 3))
            try insertAccount(user: u1, provider: "apple", accountID: "001234.\(u1.prefix(8)).0001", created: created)
            try insertAccount(user: u2, provider: "google", accountID: "1048576\(u2.count)0000000001", created: created)
            for number in 0..<sessions {
                try insertSession(user: u2, id: "s\(number)-\(u2)", created: created.adding(seconds: Int64(number)))
            }
            try insertSession(user: u1, id: "s-\(u1)", created: created)
            if let verification = store.schema.verification {
                try insert(verification, ["id": .text("v-\(u2)"), "identifier": .text("sign-in-otp-" + u2Email), "value": .text("123456:0"),
                                          "expiresAt": verification.encoding(.expiresAt).encode(created), "createdAt": verification.encoding(.createdAt).encode(created),
                                          "updatedAt": verification.encoding(.updatedAt).encode(created)])
                try insert(verification, ["id": .text("v-other"), "identifier": .text("sign-in-otp-someone@else.com"), "value": .text("654321:0"),
                                          "expiresAt": verification.encoding(.expiresAt).encode(created), "createdAt": verification.encoding(.createdAt).encode(created),
                                          "updatedAt": verification.encoding(.updatedAt).encode(created)])
            }
            if u1Sync { try store.db.execute("INSERT INTO users (sub, display_name, created_at) VALUES (?, 'Ana', '2025-03-01T10:00:02.000Z')", [u1Sub]) }
            if u2Sync {
                let id = try store.db.scalar("INSERT INTO users (sub, display_name, created_at) VALUES (?, 'Ana C', '2025-03-04T10:00:02.000Z') RETURNING id", [u2Sub]).int64 ?? 0
                for number in 0..<workspaces {
                    try store.db.execute("INSERT INTO workspaces (id, owner_id, name, created_at) VALUES (?, ?, ?, '2025-03-04T10:01:00.000Z')",
                                         ["ws\(number)-\(u2)", id, "Project \(number)"])
                }
            }
        }
    }

    func execute(_ sql: String, _ arguments: [SQLBindable] = []) throws { try store.db.execute(sql, arguments) }

    func insert(_ table: AuthSchema.Table, _ fields: [String: SQLValue]) throws {
        let present = try fields.map { name, value in
            guard let field = AuthSchema.Field(rawValue: name) else { throw GatehouseError("no Better Auth field \(name)") }
            return (key: field, value: value)
        }.filter { table.has($0.key) }.sorted { $0.key.rawValue < $1.key.rawValue }
        try store.db.execute("INSERT INTO \(table.sql) (\(present.map { table.col($0.key) }.joined(separator: ", "))) VALUES (\(present.map { _ in "?" }.joined(separator: ", ")))",
                             present.map(\.value))
    }

    func insertUser(_ id: String, email: String, created: Timestamp) throws {
        let user = store.schema.user
        try insert(user, ["id": .text(id), "name": .text("Ana Costa"), "email": .text(email), "emailVerified": .integer(1),
                          "createdAt": user.encoding(.createdAt).encode(created), "updatedAt": user.encoding(.updatedAt).encode(created)])
    }

    func insertAccount(user: String, provider: String, accountID: String, created: Timestamp, password: String? = nil) throws {
        let account = store.schema.account
        try insert(account, ["id": .text("acc-\(provider)-\(user)"), "issuer": .text(Issuer.forProvider(provider)), "accountId": .text(accountID),
                             "providerId": .text(provider), "userId": .text(user), "accessToken": .text("secret-token-\(user)"),
                             "password": password.map(SQLValue.text) ?? .null,
                             "createdAt": account.encoding(.createdAt).encode(created), "updatedAt": account.encoding(.updatedAt).encode(created)])
    }

    func insertSession(user: String, id: String, created: Timestamp) throws {
        let session = store.schema.session
        try insert(session, ["id": .text(id), "token": .text("tok-\(id)"), "userId": .text(user), "ipAddress": .text("81.2.3.4"),
                             "expiresAt": session.encoding(.expiresAt).encode(created.adding(seconds: 7 * 86_400)),
                             "createdAt": session.encoding(.createdAt).encode(created), "updatedAt": session.encoding(.updatedAt).encode(created)])
    }

    func syncID(_ sub: String) throws -> Int64? { try store.db.scalar("SELECT id FROM users WHERE sub = ?", [sub]).int64 }

    /// The Better Auth user an account (by provider account id) belongs to.
    func owner(ofAccount accountID: String) throws -> String? {
        let account = store.schema.account
        return try store.db.scalar("SELECT \(account.col(.userId)) FROM \(account.sql) WHERE \(account.col(.accountId)) = ?", [accountID]).string
    }

    /// Every row of every table except Gatehouse's bookkeeping.
    func dumpAll() throws -> [String] {
        try dump(store.db, tables: try store.db.tableNames().filter { !$0.hasPrefix("gatehouse_") })
    }

    func assertIntact(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try store.db.scalar("PRAGMA integrity_check").string, "ok", file: file, line: line)
        XCTAssertEqual(try store.db.rows("PRAGMA foreign_key_check").count, 0, file: file, line: line)
    }
}
