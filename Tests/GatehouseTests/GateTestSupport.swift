@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// A store with the gate's inputs a test needs: the Apple and Google provider configuration, a key in the ring,
/// and operator declarations — each step separate so a test can leave one out.
final class GateFixture {
    let scratch: Scratch
    let store: Store
    let gates: GateStore
    let t0 = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!
    /// The membership's renewal date used by `declareApple`: 200 days after t0.
    var renewal: Timestamp { t0.adding(seconds: 200 * 86_400) }

    init() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("gates.sqlite"), actor: tester).0
        gates = GateStore(store: store)
    }

    func day(_ days: Int64) -> Timestamp { t0.adding(seconds: days * 86_400) }

    /// Team, Services ID and bundle id, with both accepted as aud.
    func configureApple(acceptBundle: Bool = true) throws {
        let audience = acceptBundle ? ["com.example.app.web", "com.example.app"] : ["com.example.app.web"]
        try ProviderConfiguration(store: store).setApple(AppleProviderChange(teamID: "TEAMID1234", servicesID: "com.example.app.web",
                                                                             bundleID: "com.example.app", audience: audience),
                                                         actor: tester, now: t0)
    }

    /// Google client ids for the given platforms.
    func configureGoogle(_ platforms: [GoogleProviderSettings.Platform] = [.ios, .desktop, .web]) throws {
        try ProviderConfiguration(store: store).setGoogle(Dictionary(uniqueKeysWithValues: platforms.map { ($0, "1-\($0.rawValue).apps.googleusercontent.com") }),
                                                          actor: tester, now: t0)
    }

    /// Imports a fresh key (made by openssl) and, unless told not to, activates it.
    @discardableResult
    func addKey(_ id: String = "ABCDEFGHIJ", activate: Bool = true) throws -> KeyID {
        let file = try AppleKeyFiles.p256(id, in: scratch.url.path)
        let ring = AppleKeyRing(store: store)
        let key = try ring.importKey(file: file, teamID: try TeamID("TEAMID1234"), actor: tester, now: t0).key.keyID
        if activate { try ring.activate(key, actor: tester, now: t0) }
        return key
    }

    /// Every Apple operator requirement declared met; the membership renews on `renewal`.
    func declareApple(renewsAt: Timestamp? = nil) throws {
        try gates.set(GateChange(requirement: .membership, met: true, evidence: "order W1", expires: renewsAt ?? renewal), actor: tester, now: t0)
        for requirement in [GateRequirement.appID, .servicesID, .returnURLs] {
            try gates.set(GateChange(requirement: requirement, met: true, evidence: "checked in the portal"), actor: tester, now: t0)
        }
    }

    /// Apple ready everywhere, Google ready everywhere.
    func everythingReady() throws {
        try configureApple()
        try configureGoogle()
        try addKey()
        try declareApple()
    }

    func state(_ provider: GateProvider, _ platform: GatePlatform, at time: Timestamp? = nil) throws -> GateState {
        try gates.board(now: time ?? t0).gate(provider, platform).state
    }

    func count(_ table: String) throws -> Int64 { try store.db.scalar("SELECT count(*) FROM \(table)").int64 ?? -1 }
}

/// Asserts that `body` throws a GatehouseError with `code` whose text contains every one of `words`.
func assertRefused(_ body: @autoclosure () throws -> Any, code: String? = nil, _ words: String..., file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        guard let error = error as? GatehouseError else { return XCTFail("not a GatehouseError: \(error)", file: file, line: line) }
        if let code { XCTAssertEqual(error.code.rawValue, code, "\(error)", file: file, line: line) }
        // As the CLI prints it: the words name flags and command lines.
        let text = error.markedDescription.onCommandLine
        for word in words { XCTAssertTrue(text.contains(word), "expected \"\(word)\" in: \(text)", file: file, line: line) }
    }
}
