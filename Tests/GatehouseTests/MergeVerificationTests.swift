@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Which verification rows a merge drops with U2, and the deletes it sends together, on both engines (the Postgres
/// store a database of its own on the throw-away cluster ops/test starts).
final class MergeVerificationTests: XCTestCase {
    var scratch: Scratch!
    private var database: PostgresTestDatabase?

    override func setUpWithError() throws { scratch = try Scratch() }

    override func tearDown() { database?.drop() }

    /// A SQLite store, and a Postgres one when the test cluster is there.
    private func stores() throws -> [Store] {
        var stores = [try MergeScenario.store(scratch, shape: nil)]
        database = try PostgresTestDatabase.ifAvailable("gh_mergev")
        if let database { stores.append(try Store.initialize(path: database.uri, actor: tester).0) }
        return stores
    }

    func testTheRowsKeyedByU2sEmailOrHoldingItsIdAndNoOthers() throws {
        for store in try stores() {
            let s = try MergeScenario(store: store, sessions: 1, workspaces: 0)
            let verification = try XCTUnwrap(store.schema.verification)
            let email = s.u2Email
            let rows: [(String, String, String)] = [
                ("exact", email, "1"), ("otp", "sign-in-otp-" + email, "2"), ("purpose", "change-email:" + email, "3"),
                ("reset", "reset-password:tok", s.u2),
                ("no-separator", "x" + email, "4"), ("longer-email", "di" + email, "5"), ("prefix-only", email + "-otp", "6"),
                ("separator-only", ":", "7"), ("ends-in-separator", "reset-password:", "11"), ("other-user", "sign-in-otp-someone@else.com", "8"), ("shorter", "a.merge@gmail.com", "9"),
                ("accented", "sign-in-otp-é" + email, "10"),
            ]
            try store.db.write {
                for (id, identifier, value) in rows {
                    try s.insert(verification, ["id": .text(id), "identifier": .text(identifier), "value": .text(value),
                                                "expiresAt": verification.encoding(.expiresAt).encode(.now()),
                                                "createdAt": verification.encoding(.createdAt).encode(.now()),
                                                "updatedAt": verification.encoding(.updatedAt).encode(.now())])
                }
            }
            let read = try store.db.read { try MergeReadSet.read(store, source: BetterAuthUserID(s.u2), target: BetterAuthUserID(s.u1)) }
            XCTAssertEqual(Set(read.verifications.compactMap { $0[verification.column(.id)].string }), ["exact", "otp", "purpose", "reset", "v-\(s.u2)"],
                           "\(store.db.dialect.engine)")
            // A user whose email is empty (dirt) has only the rows holding its id: not every identifier ending in ":" or "-".
            let user = store.schema.user
            try store.db.execute("UPDATE \(user.sql) SET \(user.col(.email)) = '' WHERE \(user.col(.id)) = ?", [s.u2])
            let empty = try store.db.read { try MergeReadSet.read(store, source: BetterAuthUserID(s.u2), target: BetterAuthUserID(s.u1)) }
            XCTAssertEqual(Set(empty.verifications.compactMap { $0[verification.column(.id)].string }), ["reset"], "\(store.db.dialect.engine)")
        }
    }

    /// `VerificationRows` on hostile emails: separators and LIKE's wildcards inside them, accents composed and not,
    /// characters of 2 to 4 bytes, lengths either side of each index's key (Postgres: 255 characters read the index, 256
    /// scan; SQLite: 15 and more read it, 14 and fewer scan). Each finds exactly the rows a byte-wise reading finds, on
    /// both engines, with the `gatehouse_` indexes and without them, and the indexes serve the statement.
    func testHostileEmailsFindExactlyTheirRowsWithAndWithoutTheIndexes() throws {
        let long = String(repeating: "l", count: 246) + "@long.io"
        let emails = ["a@b.com", "mary-jane@x.com", "x-mary-jane@x.com", "ab-cdefghij@x.io", "abcd@efgh.io", "abcdefghi@xy.io", "a%b_c@x.io", "\u{E9}@x.io", "e\u{301}@x.io", "日本@例え.jp", "a;b@x.io", "a:b@x.io",
                      "😀@x.io", "x", "ab", long, "l" + long, "ll" + long, "A@B.COM", ""]
        XCTAssertEqual(long.unicodeScalars.count, 254)
        // Identifiers for every email: the ones that must match and near misses.
        var identifiers: [String] = []
        for email in emails where !email.isEmpty {
            identifiers += [email, "sign-in-otp-" + email, "change-email:" + email, "x" + email, email + ":", ":" + email + "x",
                            "-" + email, ":" + email, "::" + email, email.uppercased(), "reset:" + email + "-"]
        }
        identifiers += [":", "-", "", "reset-password:token"]
        for store in try stores() {
            let s = try MergeScenario(store: store, sessions: 0, workspaces: 0)
            let table = try XCTUnwrap(store.schema.verification)
            let ids = try store.db.write {
                try (identifiers.enumerated()).map { index, identifier in
                    let id = "hostile-\(index)"
                    try s.insert(table, ["id": .text(id), "identifier": .text(identifier), "value": .text(index % 7 == 0 ? "uid-\(index % 3)" : "v"),
                                         "expiresAt": table.encoding(.expiresAt).encode(.now()), "createdAt": table.encoding(.createdAt).encode(.now()),
                                         "updatedAt": table.encoding(.updatedAt).encode(.now())])
                    return (id, identifier, index % 7 == 0 ? "uid-\(index % 3)" : "v")
                }
            }
            let shape = try MergeTableShape.read(store.db, table: table.name)
            func found(_ email: String, _ userID: String) throws -> Set<String> {
                let read = VerificationRows.statement(store.db.dialect, table: table, shape: shape, email: email, userID: userID, locking: false)
                let images = try store.db.rows(read.sql, read.arguments).map(shape.image)
                return Set(images.compactMap { $0[table.column(.id)].string }.filter { $0.hasPrefix("hostile-") })
            }
            // Byte-wise, as the SQL compares: Swift's `==` and `hasSuffix` also match canonically equivalent accents.
            func expected(_ email: String, _ userID: String) -> Set<String> {
                func ends(_ text: String, with tail: String) -> Bool { Array(text.utf8).reversed().starts(with: Array(tail.utf8).reversed()) }
                return Set(ids.filter { _, identifier, value in
                    value == userID || (!email.isEmpty && (Array(identifier.utf8) == Array(email.utf8) || ends(identifier, with: ":" + email) || ends(identifier, with: "-" + email)))
                }.map(\.0))
            }
            func compare(_ label: String) throws {
                for (index, email) in emails.enumerated() {
                    let userID = "uid-\(index % 3)"
                    XCTAssertEqual(try found(email, userID), expected(email, userID), "\(store.db.dialect.engine) \(label): \(email.prefix(20))")
                }
            }
            try compare("as initialized")
            // The indexes serve the statement: on SQLite as its plan says, on Postgres with scans forbidden (so the
            // plan shows what can serve it, not what the planner prefers for a few hundred rows).
            let postgres = store.db.engine == .postgres
            let ends = postgres ? "gatehouse_verification_identifier_suffix_idx" : "gatehouse_verification_identifier_tail_idx"
            let indexNames: Set = [ends, "gatehouse_verification_value_idx"]
            XCTAssertEqual(try AccountIndexes.missing(store.db, schema: store.schema).map(\.name), [])
            let plan = try store.db.read {
                if postgres { try store.db.execute("SET LOCAL enable_seqscan = off") }
                let read = VerificationRows.statement(store.db.dialect, table: table, shape: shape, email: "ana.merge@gmail.com", userID: "uid-1", locking: false)
                return try store.db.rows((postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + read.sql, read.arguments)
                    .compactMap { (postgres ? $0[0] : $0["detail"]).string }.joined(separator: "\n")
            }
            for index in indexNames { XCTAssertTrue(plan.contains(index), "\(store.db.engine): \(plan)") }
            XCTAssertFalse(plan.contains("Seq Scan") || plan.contains("SCAN verification"), plan)
            for index in indexNames { try store.db.execute("DROP INDEX \(index)") }
            XCTAssertEqual(Set(try AccountIndexes.missing(store.db, schema: store.schema).map(\.name)), indexNames)
            try compare("without the indexes")
            XCTAssertEqual(Set(try AccountIndexes.create(store.db, schema: store.schema)), indexNames)
            try compare("with the indexes made again")
            guard postgres else { continue }

            // A role that does not own the verification table may not index it: the indexes are not wanted of it (so
            // `init` does not fail) and its lookups find the same rows.
            let uri = try XCTUnwrap(database?.uri)
            let role = "gh_verif_role_\(UInt32.random(in: .min ... .max))"
            let superuser = try PostgresConnection(uri: PostgresURI(uri.replacingOccurrences(of: "://gatehouse@", with: "://postgres@")))
            try superuser.executeScript("CREATE ROLE \(role) LOGIN")
            defer { try? superuser.executeScript("DROP OWNED BY \(role); DROP ROLE IF EXISTS \(role)") }
            try store.db.execute("DROP INDEX gatehouse_verification_value_idx")
            try store.db.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role)")
            let limited = try PostgresConnection(uri: PostgresURI(uri.replacingOccurrences(of: "://gatehouse@", with: "://\(role)@")))
            XCTAssertEqual(try AccountIndexes.missing(limited, schema: store.schema).map(\.name), [])
            XCTAssertEqual(try AccountIndexes.create(limited, schema: store.schema), [])
            let read = VerificationRows.statement(limited.dialect, table: table, shape: shape, email: "a@b.com", userID: "uid-0", locking: false)
            let images = try limited.rows(read.sql, read.arguments).map(shape.image)
            XCTAssertEqual(Set(images.compactMap { $0[table.column(.id)].string }.filter { $0.hasPrefix("hostile-") }), expected("a@b.com", "uid-0"))
        }
    }

    func testDeletesSentTogetherMustAllFindTheirRow() throws {
        for store in try stores() {
            let s = try MergeScenario(store: store, sessions: 3, workspaces: 0)
            let session = store.schema.session
            let shape = try MergeTableShape.read(store.db, table: session.name)
            let images = try shape.rows(store.db, where: session.column(.userId), is: .text(s.u2))
            XCTAssertEqual(images.count, 3)
            func delete(_ image: MergeRowImage) -> MergeStep {
                MergeStep(group: "sessions", operation: .delete, table: session.name, key: shape.key(of: image), before: image, reason: "test")
            }
            let gone = images[1].with([session.column(.id): MergeValue(.text("no-such-session"))])
            XCTAssertThrowsError(try store.db.write {
                var writer = MergeStepWriter(db: store.db)
                try writer.apply([delete(images[0]), delete(gone), delete(images[2])], at: .now())
            }) { error in
                XCTAssertTrue("\(error)".contains("2 of the 3 rows to delete were there"), "\(error)")
            }
            XCTAssertEqual(try shape.rows(store.db, where: session.column(.userId), is: .text(s.u2)).count, 3, "nothing was deleted")
            try store.db.write {
                var writer = MergeStepWriter(db: store.db)
                try writer.apply(images.map(delete), at: .now())
            }
            XCTAssertEqual(try shape.rows(store.db, where: session.column(.userId), is: .text(s.u2)).count, 0, "\(store.db.dialect.engine)")
        }
    }
}
