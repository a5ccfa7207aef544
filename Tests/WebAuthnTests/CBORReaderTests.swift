import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// The strict CBOR reader: what it accepts, and each rule it enforces, one failing input per rule.
final class CBORReaderTests: XCTestCase {
    let reader = CBORReader()

    func read(_ bytes: [UInt8]) throws -> CBORValue {
        try reader.read(bytes)
    }

    func assertRefused(_ bytes: [UInt8], _ expected: CBORError, reader: CBORReader = CBORReader(),
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try reader.read(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? CBORError, expected, file: file, line: line)
        }
    }

    func testReadsEveryAcceptedType() throws {
        XCTAssertEqual(try read([0x00]), .unsigned(0))
        XCTAssertEqual(try read([0x17]), .unsigned(23))
        XCTAssertEqual(try read([0x18, 0x18]), .unsigned(24))
        XCTAssertEqual(try read([0x19, 0x01, 0x00]), .unsigned(256))
        XCTAssertEqual(try read([0x1A, 0x00, 0x01, 0x00, 0x00]), .unsigned(65536))
        XCTAssertEqual(try read([0x1B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]), .unsigned(1 << 32))
        XCTAssertEqual(try read([0x1B] + [UInt8](repeating: 0xFF, count: 8)), .unsigned(.max))
        XCTAssertEqual(try read([0x20]), .negative(0))
        XCTAssertEqual(try read([0x20]).int64, -1)
        XCTAssertEqual(try read([0x26]).int64, -7)
        XCTAssertEqual(try read([0x39, 0x01, 0x00]).int64, -257)
        XCTAssertNil(try read([0x3B] + [UInt8](repeating: 0xFF, count: 8)).int64)
        XCTAssertEqual(try read([0x43, 1, 2, 3]), .bytes([1, 2, 3]))
        XCTAssertEqual(try read([0x40]), .bytes([]))
        XCTAssertEqual(try read([0x63] + Array("fmt".utf8)), .text("fmt"))
        XCTAssertEqual(try read([0x64, 0xE2, 0x82, 0xAC, 0x61]), .text("€a"))
        XCTAssertEqual(try read([0x82, 0x01, 0x20]), .array([.unsigned(1), .negative(0)]))
        XCTAssertEqual(try read([0xA2, 0x01, 0x02, 0x61, 0x61, 0xF6]),
                       .map([.unsigned(1): .unsigned(2), .text("a"): .null]))
        XCTAssertEqual(try read([0xF4]), .bool(false))
        XCTAssertEqual(try read([0xF5]), .bool(true))
        XCTAssertEqual(try read([0xF6]), .null)
    }

    func testRefusesIndefiniteLengths() {
        assertRefused([0x5F, 0x41, 0x00, 0xFF], .indefiniteLength(offset: 0))  // byte string
        assertRefused([0x7F, 0x61, 0x61, 0xFF], .indefiniteLength(offset: 0))  // text string
        assertRefused([0x9F, 0x01, 0xFF], .indefiniteLength(offset: 0))  // array
        assertRefused([0xBF, 0x01, 0x02, 0xFF], .indefiniteLength(offset: 0))  // map
        assertRefused([0x81, 0xFF], .indefiniteLength(offset: 1))  // a lone break
        assertRefused([0x1F], .indefiniteLength(offset: 0))  // integer with additional information 31
    }

    func testRefusesReservedAdditionalInformation() {
        for info: UInt8 in 28...30 {
            assertRefused([info], .reservedAdditionalInformation(offset: 0))
            assertRefused([0xE0 | info], .reservedAdditionalInformation(offset: 0))
        }
    }

    func testRefusesArgumentsNotInShortestForm() {
        assertRefused([0x18, 0x17], .notShortestForm(offset: 0))
        assertRefused([0x19, 0x00, 0xFF], .notShortestForm(offset: 0))
        assertRefused([0x1A, 0x00, 0x00, 0xFF, 0xFF], .notShortestForm(offset: 0))
        assertRefused([0x1B, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF], .notShortestForm(offset: 0))
        assertRefused([0x38, 0x05], .notShortestForm(offset: 0))  // -6
        assertRefused([0x58, 0x01, 0x00], .notShortestForm(offset: 0))  // a 1-byte string with a 1-byte length
        assertRefused([0x82, 0x01, 0x98, 0x00], .notShortestForm(offset: 2))  // nested: an empty array, long form
    }

    func testChecksLengthsAgainstTheBytesLeft() {
        assertRefused([0x43, 0x01, 0x02], .lengthExceedsInput(offset: 0))
        assertRefused([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .lengthExceedsInput(offset: 0))
        assertRefused([0x7A, 0x7F, 0xFF, 0xFF, 0xFF, 0x61], .lengthExceedsInput(offset: 0))
        // A count of a billion elements, one byte of which is there: refused before anything is allocated.
        assertRefused([0x9A, 0x3B, 0x9A, 0xCA, 0x00, 0x01], .lengthExceedsInput(offset: 0))
        assertRefused([0xBA, 0x3B, 0x9A, 0xCA, 0x00, 0x01, 0x01], .lengthExceedsInput(offset: 0))
        // Two map entries need at least four bytes.
        assertRefused([0xA2, 0x01, 0x02], .lengthExceedsInput(offset: 0))
        assertRefused([0x19, 0x01], .truncated(offset: 1))
        assertRefused([0x82, 0x01], .lengthExceedsInput(offset: 0))
        assertRefused([0x82, 0x01, 0x19], .truncated(offset: 3))
        assertRefused([], .truncated(offset: 0))
    }

    func testRefusesTrailingBytes() throws {
        assertRefused([0x01, 0x00], .trailingBytes(offset: 1))
        assertRefused([0xA0, 0xA0], .trailingBytes(offset: 1))
        // The prefix reader stops after one item and says where.
        let (value, used) = try reader.readPrefix([0xA1, 0x01, 0x02, 0xFF, 0xFF])
        XCTAssertEqual(value, .map([.unsigned(1): .unsigned(2)]))
        XCTAssertEqual(used, 3)
    }

    func testRefusesInvalidUTF8() {
        assertRefused([0x61, 0xFF], .invalidUTF8(offset: 0))
        assertRefused([0x62, 0xC0, 0xAF], .invalidUTF8(offset: 0))  // overlong "/"
        assertRefused([0x63, 0xED, 0xA0, 0x80], .invalidUTF8(offset: 0))  // a UTF-16 surrogate
        assertRefused([0x62, 0xE2, 0x82], .invalidUTF8(offset: 0))  // cut inside a character
    }

    func testMapsTakeIntegerOrTextKeysOnce() {
        assertRefused([0xA2, 0x01, 0x00, 0x01, 0x00], .duplicateMapKey(offset: 3, key: .unsigned(1)))
        assertRefused([0xA2, 0x61, 0x61, 0x00, 0x61, 0x61, 0x01], .duplicateMapKey(offset: 4, key: .text("a")))
        assertRefused([0xA2, 0x26, 0x00, 0x26, 0x01], .duplicateMapKey(offset: 3, key: .int(-7)))
        assertRefused([0xA1, 0x41, 0x00, 0x00], .unsupportedMapKey(offset: 1))  // a byte-string key
        assertRefused([0xA1, 0x80, 0x00], .unsupportedMapKey(offset: 1))  // an array key
        assertRefused([0xA1, 0xF5, 0x00], .unsupportedMapKey(offset: 1))  // a boolean key
        // 1 and "1" are different keys.
        XCTAssertNoThrow(try read([0xA2, 0x01, 0x00, 0x61, 0x31, 0x00]))
    }

    func testRefusesTagsFloatsAndOtherSimpleValues() {
        assertRefused([0xC0, 0x60], .tagNotSupported(offset: 0))
        assertRefused([0xD8, 0x18, 0x40], .tagNotSupported(offset: 0))
        assertRefused([0xF7], .simpleValueNotSupported(offset: 0))  // undefined
        assertRefused([0xF0], .simpleValueNotSupported(offset: 0))  // simple(16)
        assertRefused([0xF8, 0x20], .simpleValueNotSupported(offset: 0))  // simple(32)
        assertRefused([0xF9, 0x3C, 0x00], .simpleValueNotSupported(offset: 0))  // half float 1.0
        assertRefused([0xFA, 0x3F, 0x80, 0x00, 0x00], .simpleValueNotSupported(offset: 0))
        assertRefused([0xFB] + [UInt8](repeating: 0, count: 8), .simpleValueNotSupported(offset: 0))
    }

    func testDepthAndSizeLimits() throws {
        // 16 nested arrays are the default limit; the 17th is refused, and deep input never overflows the stack.
        let sixteen = [UInt8](repeating: 0x81, count: 15) + [0x80]
        XCTAssertNoThrow(try read(sixteen))
        assertRefused([UInt8](repeating: 0x81, count: 16) + [0x80], .tooDeep(offset: 16, limit: 16))
        assertRefused([UInt8](repeating: 0x81, count: 60_000) + [0x80], .tooDeep(offset: 16, limit: 16))
        assertRefused([UInt8](repeating: 0xA1, count: 60_000), .tooDeep(offset: 16, limit: 16))
        let small = CBORReader(maxDepth: 2, maxBytes: 8)
        assertRefused([0x81, 0x81, 0x80], .tooDeep(offset: 2, limit: 2), reader: small)
        assertRefused([0x49] + [UInt8](repeating: 0, count: 9), .tooLarge(size: 10, limit: 8), reader: small)
        XCTAssertEqual(try small.read([0x47] + [UInt8](repeating: 0, count: 7)), .bytes([UInt8](repeating: 0, count: 7)))
    }

    /// Random inputs and mutations of valid attestation objects (a fixed seed, so a failure replays): the reader and
    /// everything built on it must return or throw, never crash, and finish promptly.
    func testFuzzNeverCrashesNorHangs() throws {
        var random = SeededGenerator(seed: 0x6A7E_4A05_5E00_0044)
        let es256 = try SoftwareAuthenticator.es256()
        let rs256 = SoftwareAuthenticator.rs256()
        let challenge = WebAuthnChallenge(bytes: Array(repeating: 7, count: 32))
        var withExtensions = RegistrationBuilder(es256, challenge: challenge)
        withExtensions.flags |= Flag.ed
        withExtensions.extensions = .map([(.text("credProtect"), .unsigned(2)), (.text("hmac-secret"), .bool(true))])
        var packed = RegistrationBuilder(rs256, challenge: challenge)
        packed.fmt = "packed"
        packed.attStmt = [(.text("alg"), .int(-257)), (.text("sig"), .bytes([1, 2, 3])),
                          (.text("x5c"), .array([.bytes([0x30, 0x82, 0x01, 0x00])]))]
        let seeds = [RegistrationBuilder(es256, challenge: challenge), withExtensions, packed]
        for seed in seeds { XCTAssertNoThrow(try testRP.verifyRegistration(seed.response, expectedChallenge: challenge)) }

        let started = Date()
        var outcomes = [0, 0]  // accepted, refused
        func count(_ body: () throws -> Void) {
            do { try body(); outcomes[0] += 1 } catch { outcomes[1] += 1 }
        }
        // Random bytes, biased toward the head bytes that open containers.
        for _ in 0..<40_000 {
            let length = Int.random(in: 0...64, using: &random)
            let bytes = (0..<length).map { _ -> UInt8 in
                Bool.random(using: &random) ? [0x81, 0xA1, 0x9F, 0x5F, 0x18, 0x1B, 0x20, 0x61, 0xF6][Int.random(in: 0..<9, using: &random)]
                    : UInt8.random(in: 0...255, using: &random)
            }
            count { _ = try reader.read(bytes) }
            count { _ = try AuthenticatorData(bytes) }
            count { _ = try COSEPublicKey(cbor: bytes) }
        }
        // Mutations of valid attestation objects and of their authenticator data.
        for index in 0..<12_000 {
            let seed = seeds[index % seeds.count]
            var object = seed.attestationObject
            var authData = seed.authenticatorData
            mutate(&object, &random)
            mutate(&authData, &random)
            count { _ = try reader.read(object) }
            count { _ = try AuthenticatorData(authData) }
            var response = seed.response
            response.response.attestationObject = Base64URL.encode(object)
            count { _ = try testRP.verifyRegistration(response, expectedChallenge: challenge) }
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(outcomes[1], 0)
        XCTAssertLessThan(elapsed, 120, "the fuzz run took \(elapsed) s")
        print("CBOR fuzz: \(outcomes[0]) accepted, \(outcomes[1]) refused in \(String(format: "%.1f", elapsed)) s")
    }

    private func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 2: bytes.removeSubrange(at...)
            case 3: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
            case 4: bytes.remove(at: at)
            default: bytes[at] = [0x1F, 0x5F, 0x9F, 0xBF, 0xFF, 0x1B, 0x5B, 0x9B, 0xBB][Int.random(in: 0..<9, using: &random)]
            }
        }
    }
}
