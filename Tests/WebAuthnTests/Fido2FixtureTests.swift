import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Bytes encoded by an independent implementation, Yubico's python-fido2 (Tests/Fixtures/webauthn/make_fixtures.py
/// wrote fixtures.json): its CBOR encoder, its COSE keys and its attestation objects and assertions, signed with
/// Python's `cryptography` and checked by fido2 before they were written.
final class Fido2FixtureTests: XCTestCase {
    struct Fixtures: Decodable {
        struct Ceremony: Decodable {
            let name: String
            let rpId: String
            let origin: String
            let credentialId: String
            let publicKeyCOSE: String
            let registrationChallenge: String
            let registration: RegistrationResponseJSON
            let authenticationChallenge: String
            let authentication: AuthenticationResponseJSON
            let authenticationSignCount: UInt32
        }

        struct Sample: Decodable {
            let hex: String
            let value: JSONValueBox
        }

        let ceremonies: [Ceremony]
        let cbor: [Sample]
    }

    /// Decodes an arbitrary JSON value through JOSE's parser.
    struct JSONValueBox: Decodable {
        let value: JSONValue

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let any = try container.decode(AnyJSON.self)
            value = any.value
        }
    }

    struct AnyJSON: Decodable {
        let value: JSONValue

        init(from decoder: any Decoder) throws {
            if let container = try? decoder.container(keyedBy: Key.self) {
                var members: [String: JSONValue] = [:]
                for key in container.allKeys { members[key.stringValue] = try container.decode(AnyJSON.self, forKey: key).value }
                value = .object(members)
            } else if var container = try? decoder.unkeyedContainer() {
                var elements: [JSONValue] = []
                while !container.isAtEnd { elements.append(try container.decode(AnyJSON.self).value) }
                value = .array(elements)
            } else {
                let container = try decoder.singleValueContainer()
                if let bool = try? container.decode(Bool.self) {
                    value = .bool(bool)
                } else if let string = try? container.decode(String.self) {
                    value = .string(string)
                } else {
                    value = .number(try container.decode(Double.self))
                }
            }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    func loadFixtures() throws -> Fixtures {
        let url = packageRoot.appendingPathComponent("Tests/Fixtures/webauthn/fixtures.json")
        return try JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: url))
    }

    /// The reading described as make_fixtures.py's `describe` does.
    func describe(_ value: CBORValue) -> JSONValue {
        switch value {
        case .unsigned(let n): return ["int": .string(String(n))]
        case .negative(let n): return ["int": .string(n == .max ? "-18446744073709551616" : "-\(n + 1)")]
        case .bytes(let bytes): return ["bytes": .string(Hex.encode(bytes))]
        case .text(let text): return ["text": .string(text)]
        case .array(let items): return ["array": .array(items.map(describe))]
        case .map(let entries):
            return ["map": .array(entries.map { key, value -> JSONValue in
                let keyValue: CBORValue
                switch key {
                case .unsigned(let n): keyValue = .unsigned(n)
                case .negative(let n): keyValue = .negative(n)
                case .text(let text): keyValue = .text(text)
                }
                return [describe(keyValue), describe(value)]
            })]
        case .bool(let value): return ["bool": .bool(value)]
        case .null: return ["null": true]
        }
    }

    /// Maps compared without regard to order (fido2 writes CTAP2's canonical order; the reader keeps none).
    func normalise(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            if let entries = members["map"]?.arrayValue {
                let sorted = entries.map(normalise).sorted { "\($0)" < "\($1)" }
                return ["map": .array(sorted)]
            }
            return .object(members.mapValues(normalise))
        case .array(let items): return .array(items.map(normalise))
        default: return value
        }
    }

    func testTheReaderReadsWhatFido2sEncoderWrites() throws {
        let fixtures = try loadFixtures()
        XCTAssertGreaterThan(fixtures.cbor.count, 25)
        for sample in fixtures.cbor {
            let value = try CBORReader().read(hex(sample.hex))
            XCTAssertEqual(normalise(describe(value)), normalise(sample.value.value), sample.hex)
        }
    }

    func testCeremoniesFido2BuiltVerify() throws {
        let fixtures = try loadFixtures()
        XCTAssertEqual(fixtures.ceremonies.map(\.name), ["es256", "rs256", "es256-packed"])
        for ceremony in fixtures.ceremonies {
            let rp = RelyingParty(id: ceremony.rpId, name: "Gatehouse", origin: ceremony.origin)
            let registered = try rp.verifyRegistration(
                ceremony.registration, expectedChallenge: WebAuthnChallenge(bytes: try XCTUnwrap(Base64URL.decode(ceremony.registrationChallenge))))
            XCTAssertEqual(registered.id.base64URL, ceremony.credentialId, ceremony.name)
            XCTAssertEqual(Hex.encode(registered.publicKeyCOSE), ceremony.publicKeyCOSE, ceremony.name)
            XCTAssertEqual(registered.algorithm, ceremony.name.hasPrefix("rs") ? .rs256 : .es256)
            XCTAssertEqual(registered.attestationFormat, ceremony.name.hasSuffix("packed") ? "packed" : "none")
            XCTAssertEqual(registered.flags, [.userPresent, .userVerified, .backupEligible, .backedUp, .attestedCredentialData])
            XCTAssertEqual(registered.transports, ["usb", "internal"])

            let stored = StoredCredential(id: registered.id, publicKeyCOSE: registered.publicKeyCOSE, signCount: registered.signCount)
            let challenge = WebAuthnChallenge(bytes: try XCTUnwrap(Base64URL.decode(ceremony.authenticationChallenge)))
            let assertion = try rp.verifyAuthentication(ceremony.authentication, expectedChallenge: challenge,
                                                        allowedCredentialIDs: [registered.id], credential: stored)
            XCTAssertEqual(assertion.signCount, ceremony.authenticationSignCount, ceremony.name)
            // Replayed: the counter the first use stored makes the same assertion a clone.
            var afterFirstUse = stored
            afterFirstUse.signCount = assertion.signCount
            XCTAssertThrowsError(try rp.verifyAuthentication(ceremony.authentication, expectedChallenge: challenge,
                                                             allowedCredentialIDs: [registered.id], credential: afterFirstUse)) {
                XCTAssertEqual($0 as? WebAuthnError, .signCountNotIncreasing(stored: 7, received: 7))
            }
            // The challenge of the registration is not the assertion's.
            XCTAssertThrowsError(try rp.verifyAuthentication(
                ceremony.authentication, expectedChallenge: WebAuthnChallenge(bytes: try XCTUnwrap(Base64URL.decode(ceremony.registrationChallenge))),
                allowedCredentialIDs: [registered.id], credential: stored)) {
                XCTAssertEqual($0 as? WebAuthnError, .challengeMismatch)
            }
        }
    }

    func testCOSEKeysFido2WroteParse() throws {
        for ceremony in try loadFixtures().ceremonies {
            let key = try COSEPublicKey(cbor: hex(ceremony.publicKeyCOSE))
            XCTAssertEqual(key.algorithm, ceremony.name.hasPrefix("rs") ? .rs256 : .es256)
        }
    }
}
