import Foundation
@testable import Gatehouse
import JOSE
import XCTest

/// TOTP against RFC 6238's published SHA-1 vectors and against pyotp, an independent implementation; the ±1 step
/// window and single use.
final class TOTPTests: XCTestCase {
    /// RFC 6238 Appendix B's SHA-1 key: the ASCII of "12345678901234567890".
    let rfcSecret = Array("12345678901234567890".utf8)

    /// RFC 6238 Appendix B (SHA-1): its 8-digit codes, of which a 6-digit code is the last six digits (both are the
    /// same truncated value modulo 10^8 and 10^6).
    func testRFC6238SHA1Vectors() {
        let vectors: [(Int64, String)] = [(59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
                                          (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130")]
        let totp = TOTP(secret: rfcSecret)
        for (seconds, eightDigits) in vectors {
            XCTAssertEqual(totp.code(at: Timestamp(seconds: seconds)), String(eightDigits.suffix(6)), "T = \(seconds)")
        }
        XCTAssertEqual(TOTP.step(at: Timestamp(seconds: 59)), 1)
        XCTAssertEqual(TOTP.step(at: Timestamp(seconds: 1_111_111_109)), 0x23523EC)
    }

    func testCodesMatchPyotp() throws {
        let secret = try SecureRandom.bytes(TOTP.secretLength)
        let base32 = Base32.encode(secret)
        XCTAssertEqual(Base32.decode(base32), secret)
        XCTAssertEqual(Base32.decode(base32.lowercased()), secret)
        let times: [Int64] = [0, 29, 30, 59, 1_700_000_000, 1_800_000_015, 2_000_000_000]
        let uri = TOTP.uri(secret: secret, issuer: "Gatehouse", account: "root")
        let output = try runPython("""
            import sys, pyotp
            secret, uri = sys.argv[1], sys.argv[2]
            totp = pyotp.TOTP(secret)
            parsed = pyotp.parse_uri(uri)
            for t in sys.argv[3:]:
                print(totp.at(int(t)), parsed.at(int(t)))
            print(parsed.name, parsed.issuer, parsed.digits, parsed.interval, parsed.digest().name)
            """, [base32, uri] + times.map(String.init))
        let lines = output.split(separator: "\n").map(String.init)
        let totp = TOTP(secret: secret)
        for (index, time) in times.enumerated() {
            let ours = totp.code(at: Timestamp(seconds: time))
            XCTAssertEqual(lines[index], "\(ours) \(ours)", "t = \(time)")
        }
        XCTAssertEqual(lines.last, "root Gatehouse 6 30 sha1")
    }

    func testOneStepEitherSideIsAcceptedAndTwoAreNot() {
        let totp = TOTP(secret: rfcSecret)
        let now = Timestamp(seconds: 1_800_000_015)
        let step = TOTP.step(at: now)
        for offset: Int64 in [-1, 0, 1] {
            XCTAssertEqual(totp.match(totp.code(step: step + offset), at: now, after: nil), step + offset, "offset \(offset)")
        }
        for offset: Int64 in [-2, 2, -10] {
            XCTAssertNil(totp.match(totp.code(step: step + offset), at: now, after: nil), "offset \(offset)")
        }
        XCTAssertNil(totp.match("12345", at: now, after: nil))
        XCTAssertNil(totp.match("12345a", at: now, after: nil))
        XCTAssertNil(totp.match("", at: now, after: nil))
    }

    func testAStepAlreadyAcceptedIsRefused() {
        let totp = TOTP(secret: rfcSecret)
        let now = Timestamp(seconds: 1_800_000_015)
        let step = TOTP.step(at: now)
        let code = totp.code(step: step)
        XCTAssertEqual(totp.match(code, at: now, after: step - 1), step)
        XCTAssertNil(totp.match(code, at: now, after: step), "the same code again")
        // An older code (the step before) after a newer one was accepted: refused too.
        XCTAssertNil(totp.match(totp.code(step: step - 1), at: now, after: step))
    }

    /// The venv's Python (ops/test makes it, with pyotp), as the JOSE tests find it.
    func runPython(_ script: String, _ arguments: [String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? root.appendingPathComponent(".venv/bin/python").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            XCTFail("python failed: \(String(decoding: errors, as: UTF8.self))")
            throw CocoaError(.fileReadUnknown)
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
