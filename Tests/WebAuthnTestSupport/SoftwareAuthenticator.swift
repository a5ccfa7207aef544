import CCrypto
import Foundation
import JOSE
import WebAuthn

/// An RSA-2048 private key straight from OpenSSL (JOSE has no RSA private key): RS256 signatures for the software
/// authenticator.
final class RSATestKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(bits: Int32 = 2048) {
        let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(context) == 1)
        precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1)
        precondition(EVP_PKEY_generate(context, &key) == 1)
        pointer = key!
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// A big-endian key parameter, "n" or "e".
    func number(_ name: String) -> [UInt8] {
        var value: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pointer, name, &value) == 1)
        defer { BN_free(value) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(value) + 7) / 8))
        _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(value, $0.baseAddress) }
        return out
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256.
    func sign(_ data: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, data, data.count) == 1)
        var out = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &out, &length, data, data.count) == 1)
        return Array(out.prefix(length))
    }
}

/// A software authenticator: one credential (P-256 or RSA), a counter, and the bytes a real authenticator and
/// browser would send.
final class SoftwareAuthenticator: @unchecked Sendable {
    enum Key {
        case p256(P256.PrivateKey)
        case rsa(RSATestKey)
    }

    let key: Key
    let credentialID: [UInt8]
    var signCount: UInt32

    /// RSA keys are slow to make: one is shared.
    static let sharedRSAKey = RSATestKey()

    init(key: Key, credentialID: [UInt8]? = nil, signCount: UInt32 = 0) {
        self.key = key
        self.credentialID = credentialID ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
        self.signCount = signCount
    }

    static func es256(signCount: UInt32 = 0) throws -> SoftwareAuthenticator {
        SoftwareAuthenticator(key: .p256(try P256.PrivateKey.generate()), signCount: signCount)
    }

    static func rs256(signCount: UInt32 = 0) -> SoftwareAuthenticator {
        SoftwareAuthenticator(key: .rsa(sharedRSAKey), signCount: signCount)
    }

    /// The credential public key as a COSE_Key in CTAP2 canonical order.
    var coseKey: TestCBOR {
        switch key {
        case .p256(let privateKey):
            let point = privateKey.publicKey.x963Representation
            return .map([
                (.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                (.int(-2), .bytes(Array(point[1..<33]))), (.int(-3), .bytes(Array(point[33..<65]))),
            ])
        case .rsa(let rsa):
            return .map([
                (.int(1), .int(3)), (.int(3), .int(-257)),
                (.int(-1), .bytes(rsa.number("n"))), (.int(-2), .bytes(rsa.number("e"))),
            ])
        }
    }

    /// A signature as WebAuthn carries it: ES256 in DER, RS256 as is.
    func sign(_ data: [UInt8]) throws -> [UInt8] {
        switch key {
        case .p256(let privateKey): return Self.der(fromRaw: try privateKey.signature(for: data))
        case .rsa(let rsa): return rsa.sign(data)
        }
    }

    /// DER `ECDSA-Sig-Value` from r‖s, written here rather than borrowed from JOSE.
    static func der(fromRaw raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}

/// The relying party every test uses.
let testRP = RelyingParty(id: "console.example.com", name: "Gatehouse", origin: "https://console.example.com")

enum Flag {
    static let up: UInt8 = 0x01
    static let uv: UInt8 = 0x04
    static let be: UInt8 = 0x08
    static let bs: UInt8 = 0x10
    static let at: UInt8 = 0x40
    static let ed: UInt8 = 0x80
}

/// The client data a browser writes, member order as Chromium's.
func clientDataJSON(type: String, challenge: String, origin: String, crossOrigin: Bool? = false,
                    topOrigin: String? = nil) -> [UInt8] {
    var text = "{\"type\":\"\(type)\",\"challenge\":\"\(challenge)\",\"origin\":\"\(origin)\""
    if let crossOrigin { text += ",\"crossOrigin\":\(crossOrigin)" }
    if let topOrigin { text += ",\"topOrigin\":\"\(topOrigin)\"" }
    return Array((text + "}").utf8)
}

/// A registration ceremony with every part valid by default; a test changes one part and expects its step to fail.
struct RegistrationBuilder {
    var authenticator: SoftwareAuthenticator
    var challenge: WebAuthnChallenge
    var type = "webauthn.create"
    var challengeSent: String?
    var origin = testRP.origin
    var crossOrigin: Bool? = false
    var topOrigin: String?
    var rpID = testRP.id
    var flags: UInt8 = Flag.up | Flag.uv | Flag.at
    var fmt = "none"
    var attStmt: [(TestCBOR, TestCBOR)] = []
    var coseKey: TestCBOR?
    var credentialIDInAuthData: [UInt8]?
    var aaguid = [UInt8](repeating: 0, count: 16)
    var extensions: TestCBOR?
    var authDataSuffix: [UInt8] = []
    var attestationObjectSuffix: [UInt8] = []
    var clientData: [UInt8]?
    var credentialType = "public-key"
    var id: String?
    var transports: [String]? = ["internal", "hybrid"]

    init(_ authenticator: SoftwareAuthenticator, challenge: WebAuthnChallenge) {
        self.authenticator = authenticator
        self.challenge = challenge
    }

    var authenticatorData: [UInt8] {
        let credentialID = credentialIDInAuthData ?? authenticator.credentialID
        var bytes = SHA256.hash(Array(rpID.utf8)) + [flags] + TestCBOR.bigEndian(UInt64(authenticator.signCount), 4)
        if flags & Flag.at != 0 {
            bytes += aaguid + TestCBOR.bigEndian(UInt64(credentialID.count), 2) + credentialID
            bytes += (coseKey ?? authenticator.coseKey).encoded
        }
        if let extensions { bytes += extensions.encoded }
        return bytes + authDataSuffix
    }

    var attestationObject: [UInt8] {
        TestCBOR.map([
            (.text("fmt"), .text(fmt)), (.text("attStmt"), .map(attStmt)), (.text("authData"), .bytes(authenticatorData)),
        ]).encoded + attestationObjectSuffix
    }

    var response: RegistrationResponseJSON {
        let clientData = clientData ?? clientDataJSON(
            type: type, challenge: challengeSent ?? challenge.base64URL, origin: origin, crossOrigin: crossOrigin,
            topOrigin: topOrigin)
        let rawID = Base64URL.encode(authenticator.credentialID)
        return RegistrationResponseJSON(
            id: id ?? rawID, rawId: rawID,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(attestationObject),
                transports: transports),
            type: credentialType)
    }
}

/// An authentication ceremony with every part valid by default.
struct AssertionBuilder {
    var authenticator: SoftwareAuthenticator
    var challenge: WebAuthnChallenge
    var type = "webauthn.get"
    var challengeSent: String?
    var origin = testRP.origin
    var crossOrigin: Bool? = false
    var topOrigin: String?
    var rpID = testRP.id
    var flags: UInt8 = Flag.up | Flag.uv
    var signCount: UInt32
    var authDataSuffix: [UInt8] = []
    var clientData: [UInt8]?
    var credentialType = "public-key"
    var id: String?
    var userHandle: [UInt8]?
    /// Changes the signature after signing.
    var tamperSignature: (([UInt8]) -> [UInt8])?
    /// Changes the authenticator data after signing.
    var tamperAuthenticatorData: (([UInt8]) -> [UInt8])?

    init(_ authenticator: SoftwareAuthenticator, challenge: WebAuthnChallenge, signCount: UInt32) {
        self.authenticator = authenticator
        self.challenge = challenge
        self.signCount = signCount
    }

    func response() throws -> AuthenticationResponseJSON {
        let clientData = clientData ?? clientDataJSON(
            type: type, challenge: challengeSent ?? challenge.base64URL, origin: origin, crossOrigin: crossOrigin,
            topOrigin: topOrigin)
        let authData = SHA256.hash(Array(rpID.utf8)) + [flags] + TestCBOR.bigEndian(UInt64(signCount), 4) + authDataSuffix
        var signature = try authenticator.sign(authData + SHA256.hash(clientData))
        if let tamperSignature { signature = tamperSignature(signature) }
        let sentAuthData = tamperAuthenticatorData?(authData) ?? authData
        let rawID = Base64URL.encode(authenticator.credentialID)
        return AuthenticationResponseJSON(
            id: id ?? rawID, rawId: rawID,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(sentAuthData),
                signature: Base64URL.encode(signature), userHandle: userHandle.map(Base64URL.encode)),
            type: credentialType)
    }
}
