@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The provider table against Better Auth 1.7.1's sources (packages/core/src/social-providers/*.ts).
final class BetterAuthProvidersTests: XCTestCase {
    func testEveryBuiltInProviderOnce() {
        let ids = BetterAuthProviders.builtIn.map(\.id)
        XCTAssertEqual(ids.count, 35, "socialProviders in social-providers/index.ts")
        XCTAssertEqual(Set(ids).count, ids.count)
        XCTAssertEqual(BetterAuthProviders.builtIn.filter(\.verifiesIDTokens).map(\.id).sorted(),
                       ["apple", "cognito", "facebook", "google", "line", "microsoft"], "the providers that declare an idToken config")
    }

    func testIssuersAsBetterAuthWritesThem() {
        XCTAssertEqual(BetterAuthProviders.issuer(for: "apple"), .known("https://appleid.apple.com"))
        XCTAssertEqual(BetterAuthProviders.issuer(for: "google"), .known("https://accounts.google.com"))
        XCTAssertEqual(BetterAuthProviders.issuer(for: "facebook"), .known("https://www.facebook.com"))
        XCTAssertEqual(BetterAuthProviders.issuer(for: "line"), .known("https://access.line.me"))
        XCTAssertEqual(BetterAuthProviders.issuer(for: "github"), .known("local:oauth:github"))
        XCTAssertEqual(BetterAuthProviders.issuer(for: "gitlab"), .known("local:oauth:gitlab"), "gitlab's issuer option is its server, not an accountIssuer")
        XCTAssertEqual(BetterAuthProviders.issuer(for: "credential"), .known("local:credential"))
        XCTAssertNil(BetterAuthProviders.issuer(for: "microsoft").value, "per tenant")
        XCTAssertNil(BetterAuthProviders.issuer(for: "cognito").value, "per user pool")
        XCTAssertNil(BetterAuthProviders.issuer(for: "my-okta").value, "a generic OAuth provider: accountIssuer or discovery")
        XCTAssertEqual(Issuer.forProvider("github"), "local:oauth:github")
        XCTAssertEqual(Issuer.forProvider("apple"), Issuer.apple)
        XCTAssertEqual(BetterAuthProviders.oauthIssuer("my provider/ü"), "local:oauth:my%20provider%2F%C3%BC", "encodeURIComponent")
    }

    func testRemarksOnIssuersBetterAuthWouldNotFind() {
        XCTAssertNil(BetterAuthProviders.issuerRemark(providerID: "google", recorded: "https://accounts.google.com"))
        XCTAssertEqual(BetterAuthProviders.issuerRemark(providerID: "github", recorded: "local:github"),
                       "Better Auth 1.7.1 writes local:oauth:github for github: it will not find this account by (issuer, accountId)")
        XCTAssertEqual(BetterAuthProviders.issuerRemark(providerID: "apple", recorded: nil), "Better Auth 1.7.1 would write https://appleid.apple.com")
        XCTAssertNil(BetterAuthProviders.issuerRemark(providerID: "microsoft", recorded: "https://login.microsoftonline.com/t/v2.0"))
    }
}
