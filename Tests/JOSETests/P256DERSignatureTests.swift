import Foundation
import JOSE
import XCTest

/// ES256 signatures in ASN.1 DER (WebAuthn's form): the openssl CLI's signatures verify; every encoding but the one
/// canonical DER, and every signature over other data or under another key, does not.
final class P256DERSignatureTests: XCTestCase {
    func testTheOpenSSLCLIsDERSignaturesVerify() throws {
        let privateKey = try P256.PrivateKey.generate()
        let directory = try TemporaryDirectory()
        _ = try directory.write("key.pem", privateKey.pemRepresentation)
        let message = Array("authenticatorData and the client data hash".utf8)
        _ = try directory.write("message", bytes: message)
        for _ in 0..<8 {
            try OpenSSLCLI.run(["dgst", "-sha256", "-sign", "key.pem", "-out", "sig.der", "message"], in: directory)
            let der = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path("sig.der"))))
            XCTAssertTrue(privateKey.publicKey.isValidSignature(derEncoded: der, for: message))
            XCTAssertFalse(privateKey.publicKey.isValidSignature(derEncoded: der, for: message + [0]))
            XCTAssertFalse(try P256.PrivateKey.generate().publicKey.isValidSignature(derEncoded: der, for: message))
        }
    }

    func testOnlyTheCanonicalDEREncodingIsValid() throws {
        let privateKey = try P256.PrivateKey.generate()
        let message = Array("message".utf8)
        let raw = try privateKey.signature(for: message)
        let r = Array(raw[0..<32]), s = Array(raw[32..<64])
        let der = ES256Tests.derSignature(r: r, s: s)
        let key = privateKey.publicKey
        XCTAssertTrue(key.isValidSignature(derEncoded: der, for: message))

        // JWS's raw r‖s is not DER.
        XCTAssertFalse(key.isValidSignature(derEncoded: raw, for: message))
        // A byte after the sequence.
        XCTAssertFalse(key.isValidSignature(derEncoded: der + [0x00], for: message))
        // The sequence length in long form (0x81 n).
        XCTAssertFalse(key.isValidSignature(derEncoded: [0x30, 0x81] + der.dropFirst(), for: message))
        // r with a superfluous leading zero.
        let rPadded = [0x02, UInt8(der[3] + 1), 0x00] + der[4..<(4 + Int(der[3]))]
        let sPart = der[(4 + Int(der[3]))...]
        let padded = [0x30, UInt8(rPadded.count + sPart.count)] + rPadded + sPart
        XCTAssertFalse(key.isValidSignature(derEncoded: padded, for: message))
        // Truncated, empty.
        XCTAssertFalse(key.isValidSignature(derEncoded: Array(der.dropLast()), for: message))
        XCTAssertFalse(key.isValidSignature(derEncoded: [], for: message))
        // ECDSA is malleable: (r, n − s) verifies too. Only the encoding is pinned here; a WebAuthn replay is stopped by
        // the single-use challenge, not by the signature's form.
        let order = Hex.decode(ES256Tests.order)!
        var negated = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(s[index]) - borrow
            negated[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        XCTAssertTrue(key.isValidSignature(derEncoded: ES256Tests.derSignature(r: r, s: negated), for: message))
        // r = 0 and r = n are out of range.
        XCTAssertFalse(key.isValidSignature(derEncoded: ES256Tests.derSignature(r: [0], s: s), for: message))
        XCTAssertFalse(key.isValidSignature(derEncoded: ES256Tests.derSignature(r: order, s: s), for: message))
    }
}
