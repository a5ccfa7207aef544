import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Authenticator data: the fixed part, attested credential data, extensions, and nothing after.
final class AuthenticatorDataTests: XCTestCase {
    let challenge = WebAuthnChallenge(bytes: [UInt8](repeating: 1, count: 32))

    func assertRefused(_ bytes: [UInt8], _ expected: AuthenticatorDataError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try AuthenticatorData(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? AuthenticatorDataError, expected, file: file, line: line)
        }
    }

    func testReadsTheFixedPartAndEveryFlag() throws {
        let bytes = SHA256.hash(Array("console.example.com".utf8)) + [0xFF & ~0x40 & ~0x80 & ~0x02 & ~0x20] + [0x01, 0x02, 0x03, 0x04]
        let data = try AuthenticatorData(bytes)
        XCTAssertEqual(data.rpIDHash, testRP.idHash)
        XCTAssertEqual(data.flags, [.userPresent, .userVerified, .backupEligible, .backedUp])
        XCTAssertEqual(data.signCount, 0x0102_0304)
        XCTAssertNil(data.attestedCredentialData)
        XCTAssertNil(data.extensions)
        XCTAssertEqual(data.bytes, bytes)
    }

    func testReadsAttestedCredentialDataAndExtensions() throws {
        let authenticator = try SoftwareAuthenticator.es256(signCount: 9)
        var builder = RegistrationBuilder(authenticator, challenge: challenge)
        builder.aaguid = Array(0..<16)
        builder.flags |= Flag.ed
        builder.extensions = .map([(.text("credProtect"), .unsigned(2))])
        let data = try AuthenticatorData(builder.authenticatorData)
        XCTAssertEqual(data.signCount, 9)
        let attested = try XCTUnwrap(data.attestedCredentialData)
        XCTAssertEqual(attested.aaguid, Array(0..<16))
        XCTAssertEqual(attested.credentialID, authenticator.credentialID)
        XCTAssertEqual(attested.publicKeyCOSE, authenticator.coseKey.encoded)
        XCTAssertEqual(data.extensions, [.text("credProtect"): .unsigned(2)])
    }

    func testRefusesEveryMalformation() throws {
        let authenticator = try SoftwareAuthenticator.es256()
        let valid = RegistrationBuilder(authenticator, challenge: challenge)
        let fixed = Array(valid.authenticatorData.prefix(37))
        assertRefused(Array(fixed.prefix(36)), .truncated("its fixed 37 bytes (rpIdHash, flags, signCount)"))
        assertRefused(Array(valid.authenticatorData.prefix(50)), .truncated("the attested credential data's AAGUID and id length"))
        assertRefused(Array(valid.authenticatorData.prefix(60)), .truncated("the credential id"))
        // Trailing bytes after the key (AT without ED), or after the fixed part.
        var trailing = valid
        trailing.authDataSuffix = [0xA0]
        assertRefused(trailing.authenticatorData, .trailingBytes(1))
        var noAT = fixed
        noAT[32] = Flag.up
        assertRefused(noAT + [0x00], .trailingBytes(1))
        // A credential id of 1024 bytes.
        var long = RegistrationBuilder(SoftwareAuthenticator(key: authenticator.key, credentialID: [UInt8](repeating: 7, count: 1024)),
                                       challenge: challenge)
        long.flags = Flag.up | Flag.at
        assertRefused(long.authenticatorData, .credentialIDTooLong(1024))
        var longest = long
        longest.authenticator = SoftwareAuthenticator(key: authenticator.key, credentialID: [UInt8](repeating: 7, count: 1023))
        XCTAssertEqual(try AuthenticatorData(longest.authenticatorData).attestedCredentialData?.credentialID.count, 1023)
        // ED set with no extensions, extensions that are not a map, and extensions with bytes after them.
        var noExtensions = valid
        noExtensions.flags |= Flag.ed
        assertRefused(noExtensions.authenticatorData, .truncated("the extensions the ED flag announces"))
        var notAMap = noExtensions
        notAMap.extensions = .array([])
        assertRefused(notAMap.authenticatorData, .extensions("they are not a CBOR map"))
        var afterExtensions = noExtensions
        afterExtensions.extensions = .map([])
        afterExtensions.authDataSuffix = [0x00]
        assertRefused(afterExtensions.authenticatorData, .extensions("CBOR has bytes after the item (from byte 1)"))
        // A key that is not CBOR this reader accepts.
        var indefinite = valid
        indefinite.coseKey = .raw([0xBF, 0x01, 0x02, 0xFF])
        assertRefused(indefinite.authenticatorData, .publicKey(.cbor(.indefiniteLength(offset: 0))))
        // Too large.
        assertRefused(fixed + [UInt8](repeating: 0, count: AuthenticatorData.maxBytes), .tooLarge(37 + AuthenticatorData.maxBytes))
    }
}
