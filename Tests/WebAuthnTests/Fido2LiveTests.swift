import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Whole ceremonies against an independent client and authenticator, Yubico's python-fido2
/// (Tests/Fixtures/webauthn/fido2_client.py): it reads the options Gatehouse builds, answers as a browser would, and
/// Gatehouse verifies the answer. Needs ops/test's venv (fido2 is in ops/requirements-test.txt); fails without it.
final class Fido2LiveTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webauthn-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    static func python() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"], !configured.isEmpty {
            return configured
        }
        let venv = packageRoot.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            XCTFail("no Python with fido2 (GATEHOUSE_TEST_PYTHON unset, \(venv) absent): run ops/test, which creates .venv")
            throw CocoaError(.fileNoSuchFile)
        }
        return venv
    }

    /// Runs fido2_client.py; output goes through files so that the child never blocks on a pipe.
    func client(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        let out = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.python())
        process.arguments = [packageRoot.appendingPathComponent("Tests/Fixtures/webauthn/fido2_client.py").path] + arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            XCTFail("fido2_client.py failed (\(process.terminationStatus)): \(message)", file: file, line: line)
            throw CocoaError(.executableLoad)
        }
        return try Data(contentsOf: out)
    }

    func write<T: Encodable>(_ value: T, _ name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try JSONEncoder().encode(value).write(to: url)
        return url.path
    }

    func registerAndSignIn(algorithm: COSEAlgorithm) throws {
        let keyPath = directory.appendingPathComponent("key.pem").path
        let user = WebAuthnUser(handle: Array(repeating: 0x42, count: 16), name: "alice", displayName: "Alice")
        let creation = try testRP.creationOptions(user: user, excludeCredentials: [CredentialDescriptor(id: CredentialID(bytes: [1]))])
        let registration = try JSONDecoder().decode(RegistrationResponseJSON.self, from: client(
            ["register", try write(creation, "create.json"), keyPath, String(algorithm.rawValue), testRP.origin]))
        let credential = try testRP.verifyRegistration(registration, expectedChallenge: creation.challenge)
        XCTAssertEqual(credential.algorithm, algorithm)
        XCTAssertEqual(credential.transports, ["usb"])
        var stored = StoredCredential(id: credential.id, publicKeyCOSE: credential.publicKeyCOSE, signCount: credential.signCount)

        for count in [1, 2] {
            let request = try testRP.requestOptions(allowCredentials: [CredentialDescriptor(id: credential.id, transports: credential.transports)])
            let assertion = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: client(
                ["authenticate", try write(request, "get.json"), keyPath, testRP.origin, String(count)]))
            let verified = try testRP.verifyAuthentication(assertion, expectedChallenge: request.challenge,
                                                           allowedCredentialIDs: request.allowCredentials.map(\.id), credential: stored)
            XCTAssertEqual(verified.signCount, UInt32(count))
            stored.signCount = verified.signCount
            // The same assertion again: its challenge is spent (the caller's job) and its counter no longer rises.
            XCTAssertThrowsError(try testRP.verifyAuthentication(assertion, expectedChallenge: request.challenge,
                                                                 allowedCredentialIDs: [credential.id], credential: stored)) {
                XCTAssertEqual($0 as? WebAuthnError, .signCountNotIncreasing(stored: UInt32(count), received: UInt32(count)))
            }
        }

        // Answered for another origin: refused.
        let request = try testRP.requestOptions(allowCredentials: [CredentialDescriptor(id: credential.id)])
        let phished = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: client(
            ["authenticate", try write(request, "get.json"), keyPath, "https://console.example.com.evil.example", "9"]))
        XCTAssertThrowsError(try testRP.verifyAuthentication(phished, expectedChallenge: request.challenge,
                                                             allowedCredentialIDs: [credential.id], credential: stored)) {
            XCTAssertEqual($0 as? WebAuthnError, .originMismatch(received: "https://console.example.com.evil.example"))
        }
    }

    func testES256() throws {
        try registerAndSignIn(algorithm: .es256)
    }

    func testRS256() throws {
        try registerAndSignIn(algorithm: .rs256)
    }
}
