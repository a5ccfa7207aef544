@testable import Console
@testable import D1Engine
import Foundation
@testable import Gatehouse
import HTTPServer
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The hand-written JSON must be byte for byte what `JSONBody.encoder` writes.
final class ConsoleJSONWriterTests: XCTestCase {
    func testStringsAreEscapedAsJSONEncoderEscapesThem() throws {
        let strings = ["plain", "quote \" and backslash \\", "a/b", "\n\r\t\u{8}\u{c}", "\u{0}\u{1}\u{1f}\u{7f}", "é 漢 😀", ""]
        var json = JSONWriter()
        json.beginArray()
        for text in strings { json.string(text) }
        json.endArray()
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), String(decoding: try JSONBody.encoder.encode(strings), as: UTF8.self))
    }

    func testObjectsNumbersBooleansAndOmittedNils() throws {
        struct Sample: Encodable {
            let a: Int, b: Bool, c: String?, d: [String], e: Int64
        }
        var json = JSONWriter()
        json.beginObject()
        json.field("a", -12)
        json.field("b", true)
        json.field("c", nil as String?)
        json.field("d", strings: ["x", "y"])
        json.field("e", Int64.max)
        json.endObject()
        let expected = try JSONBody.encoder.encode(Sample(a: -12, b: true, c: nil, d: ["x", "y"], e: .max))
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), String(decoding: expected, as: UTF8.self))
    }

    /// Every optional field set (ban, merges, sync row), then every one nil: the seeded stores lack some of them.
    func testUserDetailWithEveryFieldAndWithNone() throws {
        let time = Timestamp(milliseconds: 1_764_460_800_123)
        let id = BetterAuthUserID("u1")
        let full = UserDetail(
            user: UserRecord(id: id, name: "Ana \"A\"", email: "ana@example.com", emailVerified: true, image: "https://x/y.png",
                             createdAt: time, updatedAt: time, role: "admin", ban: BanState(banned: true, reason: "spam\n", expires: time)),
            flags: [.emailNotVerified, .unprovisioned],
            accounts: [AccountRecord(id: "a1", providerId: "apple", issuer: "https://appleid.apple.com", accountId: "0001.abc", createdAt: time,
                                     updatedAt: time, scope: "email name", accessTokenExpiresAt: time, refreshTokenExpiresAt: time,
                                     hasAccessToken: true, hasRefreshToken: false, hasIdToken: true, hasPassword: false)],
            sessions: SessionOverview(total: 3, unexpired: 1, latest: [
                SessionRecord(id: "s1", createdAt: time, updatedAt: time, expiresAt: time, expired: true, ipAddress: "::1",
                              userAgent: "Mozilla/5.0", impersonatedBy: "root"),
            ]),
            sync: SyncRecord(sub: id.syncSub, provisioned: true, user: SyncUserRecord(id: 42, sub: id.syncSub, displayName: "Ana", createdAt: "2026-01-01"),
                             workspaces: [WorkspaceRecord(id: "w1", name: "Home", createdAt: "2026-01-02")],
                             subscriptions: [SubscriptionRecord(id: "p1", plan: "pro", status: "active", currentPeriodEnd: "2026-02-01")],
                             roles: [RoleRecord(role: "beta", grantedAt: "2026-01-03")], missingTables: ["allow_list"]),
            merges: MergeHistory(available: true, records: [MergeRecordSummary(fields: ["survivor_id": "u1", "absorbed_id": "u2", "Applied_At": "t"])]))
        let empty = UserDetail(
            user: UserRecord(id: id, name: "", email: "", emailVerified: false, image: nil, createdAt: nil, updatedAt: nil, role: nil, ban: nil),
            flags: [], accounts: [AccountRecord(id: "a1", providerId: "credential", issuer: nil, accountId: "x", createdAt: nil, updatedAt: nil,
                                                scope: nil, accessTokenExpiresAt: nil, refreshTokenExpiresAt: nil, hasAccessToken: false,
                                                hasRefreshToken: false, hasIdToken: false, hasPassword: true)],
            sessions: SessionOverview(total: 0, unexpired: 0, latest: [
                SessionRecord(id: "s1", createdAt: nil, updatedAt: nil, expiresAt: nil, expired: false, ipAddress: nil, userAgent: nil, impersonatedBy: nil),
            ]),
            sync: SyncRecord(sub: id.syncSub, provisioned: false, user: nil, workspaces: [], subscriptions: [], roles: [], missingTables: []),
            merges: MergeHistory(available: false, records: []))
        for detail in [full, empty] {
            XCTAssertEqual(UserDetailJSON.response(detail).bodyText, String(decoding: try JSONBody.encoder.encode(detail), as: UTF8.self))
        }
    }
}

private extension HTTPResponse {
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}
