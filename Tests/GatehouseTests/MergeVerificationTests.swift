import Foundation
import XCTest
@testable import Gatehouse
import Storage

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
