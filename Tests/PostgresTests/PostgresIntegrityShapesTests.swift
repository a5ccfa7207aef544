@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// `accounts check` on every Postgres shape of Better Auth's tables (`PostgresAuthSchemaTests`' fixtures: Better Auth
/// 1.4–1.6, Drizzle snake_case with renamed tables, Prisma, uuid ids): each check runs, finds the dangling account and
/// session and the user without a sync row that each store is given, and nothing else; a merge and its undo work there.
final class PostgresIntegrityShapesTests: XCTestCase {
    func testEveryCheckAndAMergeRunOnEveryShape() throws {
        let shapes: [(name: String, sql: String, tables: [String: String]?)] = [
            ("better-auth-1.6", PostgresAuthSchemaTests.betterAuth16, nil),
            ("drizzle-snake-case", PostgresAuthSchemaTests.drizzleSnakeCase,
             ["user": "custom_user", "session": "custom_session", "account": "custom_account", "verification": "custom_verification"]),
            ("prisma", PostgresAuthSchemaTests.prisma(), nil),
            ("uuid-ids", PostgresAuthSchemaTests.uuidIDs, nil),
        ]
        let admin = try TestPostgres.connect()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gh-integrity-shapes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        setenv("GATEHOUSE_KEY_DIR", scratch.appendingPathComponent("keys").path, 1)
        for shape in shapes {
            let name = TestPostgres.uniqueTable("gh_shape")
            try admin.executeScript("CREATE DATABASE \(name)")
            defer { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            let uri = try TestPostgres.uri(database: name)
            let setup = try PostgresConnection(uri: PostgresURI(uri))
            try setup.executeScript(shape.sql)
            var configuration: String?
            if let tables = shape.tables {
                let file = scratch.appendingPathComponent("\(shape.name).json")
                try JSONSerialization.data(withJSONObject: ["tables": tables]).write(to: file)
                configuration = file.path
            }
            let (store, _) = try Store.initialize(path: uri, configurationPath: configuration, actor: Actor("tester"))
            let s = store.schema, db = store.db
            let user = s.user, account = s.account, session = s.session
            // Two users (one provisioned), an account each, then a dangling account and session, their keys dropped
            // first as a store loaded without them would be.
            let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
            for (index, id) in ids.prefix(2).enumerated() {
                try db.execute("INSERT INTO \(user.sql) (\(user.col(.id)), \(user.col(.name)), \(user.col(.email)), \(user.col(.emailVerified)), \(user.col(.createdAt)), \(user.col(.updatedAt))) VALUES (?, 'U', ?, true, '2025-01-01 00:00:00', '2025-01-01 00:00:00')",
                               [id, "u\(index)@example.com"])
            }
            for (index, owner) in ids.enumerated() {
                if index == 2 {
                    for key in try db.rows("SELECT conname, conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND confrelid = to_regclass(?)", [user.sql]) {
                        try db.execute("ALTER TABLE \(key[1].string ?? "") DROP CONSTRAINT \(SQL.quote(key[0].string ?? ""))")
                    }
                }
                let issuer = s.hasIssuer ? "\(account.col(.issuer)), " : "", issuerValue = s.hasIssuer ? "'https://accounts.google.com', " : ""
                try db.execute("INSERT INTO \(account.sql) (\(account.col(.id)), \(issuer)\(account.col(.accountId)), \(account.col(.providerId)), \(account.col(.userId)), \(account.col(.createdAt)), \(account.col(.updatedAt))) VALUES (?, \(issuerValue)?, ?, ?, '2025-01-01 00:00:00', '2025-01-01 00:00:00')",
                               [UUID().uuidString.lowercased(), "g\(index)", index == 1 ? "apple" : "google", owner])
            }
            try db.execute("INSERT INTO \(session.sql) (\(session.col(.id)), \(session.col(.expiresAt)), \(session.col(.token)), \(session.col(.createdAt)), \(session.col(.updatedAt)), \(session.col(.userId))) VALUES (?, '2030-01-01 00:00:00', 'token-dangling', '2025-01-01 00:00:00', '2025-01-01 00:00:00', ?)",
                           [UUID().uuidString.lowercased(), ids[2]])
            try db.execute("INSERT INTO users (sub, created_at) VALUES (?, '2025-01-01')", ["better_auth|" + ids[0]])

            let report = try IntegrityChecker(store: store).run()
            let counts = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.code, $0.count) })
            XCTAssertEqual(counts, ["account_user_missing": 1, "user_without_accounts": 0, "sync_sub_malformed": 0, "sync_sub_user_missing": 0,
                                    "user_unprovisioned": 1, "duplicate_provider_account": 0, "session_user_missing": 1], shape.name)
            let samples = report.findings.flatMap(\.samples).joined(separator: "\n")
            XCTAssertTrue(samples.contains(ids[2]) && samples.contains(ids[1]), "\(shape.name): \(samples)")
            XCTAssertFalse(samples.contains("token-dangling"), "no session token in samples")

            // A merge of the second user into the first, and its undo, on the same shape.
            let before = try db.rows("SELECT \(account.col(.id)), \(account.col(.userId)) FROM \(account.sql) ORDER BY 1").map { "\($0.values)" }
            let plan = try MergePlanner(store: store).plan(source: ids[1], target: ids[0], decisions: MergeDecisions(keepEmail: .target), actor: Actor("tester"))
            let planID = try XCTUnwrap(plan.id, "\(shape.name): \(plan.unresolved)")
            let applied = try MergeApplier(store: store).apply(planID: planID, ticket: "SUP-1", actor: Actor("tester"))
            XCTAssertEqual(try db.scalar("SELECT count(*) FROM \(account.sql) WHERE \(account.col(.userId)) = ?", [ids[0]]).int64, 2, shape.name)
            _ = try MergeUndo(store: store).undo(mergeID: String(applied.mergeID), reason: "test", actor: Actor("tester"))
            XCTAssertEqual(try db.rows("SELECT \(account.col(.id)), \(account.col(.userId)) FROM \(account.sql) ORDER BY 1").map { "\($0.values)" }, before, shape.name)
        }
    }
}
