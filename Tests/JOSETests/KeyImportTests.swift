import JOSE
import XCTest

/// Key files as operators meet them, made at test time with the openssl CLI.
final class KeyImportTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    /// Generates a P-256 PKCS#8 key (the shape of Apple's .p8) and returns its PEM.
    func makeP256Key(_ name: String = "p256.p8") throws -> String {
        try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name],
                           in: directory)
        return try directory.read(name)
    }

    /// Asserts that importing `pem` throws `expected` and that no message leaks a line of the PEM body.
    func assertImport(_ pem: String, throws expected: KeyImportError, file: StaticString = #filePath,
                      line: UInt = #line) {
        XCTAssertThrowsError(try P256.PrivateKey(pemRepresentation: pem), file: file, line: line) { error in
            guard let importError = error as? KeyImportError else {
                return XCTFail("not a KeyImportError: \(error)", file: file, line: line)
            }
            XCTAssertEqual(importError, expected, file: file, line: line)
            self.assertNoKeyMaterial(in: importError, from: pem, file: file, line: line)
        }
    }

    func assertNoKeyMaterial(in error: KeyImportError, from pem: String, file: StaticString = #filePath,
                             line: UInt = #line) {
        let messages = [error.description, error.description(naming: "AuthKey_TEST123456.p8"), "\(error)",
                        String(reflecting: error)]
        for bodyLine in Self.bodyLines(of: pem) {
            for message in messages {
                XCTAssertFalse(message.contains(bodyLine), "message leaks key material: \(message)", file: file,
                               line: line)
            }
        }
    }

    /// The base64 lines of a PEM file long enough to mean something (every full line, most last lines).
    static func bodyLines(of pem: String) -> [String] {
        pem.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("-----") && !$0.contains(":") && $0.count >= 12 }
    }

    // MARK: - Accepted

    func testP256PKCS8IsAccepted() throws {
        let pem = try makeP256Key()
        let key = try P256.PrivateKey(pemRepresentation: pem)
        try OpenSSLCLI.run(["pkey", "-in", "p256.p8", "-pubout", "-out", "pub.pem"], in: directory)
        let expected = try P256.PublicKey(pemRepresentation: directory.read("pub.pem"))
        XCTAssertEqual(key.publicKey, expected)
        XCTAssertEqual(key.publicKey.fingerprint, expected.fingerprint)
    }

    func testCRLFByteOrderMarkAndWhitespaceAreTolerated() throws {
        let pem = try makeP256Key()
        let expected = try P256.PrivateKey(pemRepresentation: pem).publicKey
        let crlf = pem.replacingOccurrences(of: "\n", with: "\r\n")
        let messy = "\u{FEFF}  \r\n\t" + crlf + "\r\n\r\n   \n"
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: crlf).publicKey, expected)
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: messy).publicKey, expected)
        // Indented lines and trailing spaces, as after a paste into a YAML file.
        let indented = pem.split(separator: "\n").map { "    \($0)  " }.joined(separator: "\n")
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: indented).publicKey, expected)
        // A BOM read from disk as bytes, not as a Swift escape.
        let path = try directory.write("bom.p8", bytes: [0xEF, 0xBB, 0xBF] + Array(crlf.utf8))
        let fromDisk = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: fromDisk).publicKey, expected)
    }

    func testPEMRepresentationRoundTripsAndOpenSSLReadsIt() throws {
        let original = try P256.PrivateKey(pemRepresentation: makeP256Key())
        let exported = original.pemRepresentation
        XCTAssertTrue(exported.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        XCTAssertTrue(exported.hasSuffix("-----END PRIVATE KEY-----\n"))
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: exported).publicKey, original.publicKey)

        _ = try directory.write("exported.p8", exported)
        try OpenSSLCLI.run(["pkey", "-in", "exported.p8", "-pubout", "-outform", "DER", "-out", "pub.der"],
                           in: directory)
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path("pub.der"))))
        XCTAssertEqual(der, original.publicKey.derRepresentation)
    }

    func testImportedKeySignsWhatOpenSSLVerifies() throws {
        let key = try P256.PrivateKey(pemRepresentation: makeP256Key())
        try OpenSSLCLI.run(["pkey", "-in", "p256.p8", "-pubout", "-out", "pub.pem"], in: directory)
        let message = Array("imported key".utf8)
        let signature = try key.signature(for: message)
        _ = try directory.write("m", bytes: message)
        _ = try directory.write("s", bytes: ES256Tests.derSignature(r: Array(signature[0..<32]),
                                                                    s: Array(signature[32..<64])))
        let output = try OpenSSLCLI.run(["dgst", "-sha256", "-verify", "pub.pem", "-signature", "s", "m"],
                                        in: directory)
        XCTAssertTrue(output.contains("Verified OK"))
    }

    func testPrintingAKeyNeverShowsTheSecret() throws {
        let key = try P256.PrivateKey.generate()
        for text in ["\(key)", String(reflecting: key)] {
            XCTAssertTrue(text.contains(key.publicKey.fingerprint))
            for line in Self.bodyLines(of: key.pemRepresentation) { XCTAssertFalse(text.contains(line)) }
        }
    }

    func testGeneratedKeyRoundTrips() throws {
        let key = try P256.PrivateKey.generate()
        XCTAssertEqual(try P256.PrivateKey(pemRepresentation: key.pemRepresentation).publicKey, key.publicKey)
        XCTAssertNotEqual(try P256.PrivateKey.generate().publicKey, key.publicKey)
    }

    // MARK: - Refused, each with its own reason

    func testRSAKeyIsRefused() throws {
        try OpenSSLCLI.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa.pem"],
                           in: directory)
        assertImport(try directory.read("rsa.pem"), throws: .rsaKey)
        try OpenSSLCLI.run(["rsa", "-in", "rsa.pem", "-traditional", "-out", "rsa1.pem"], in: directory)
        let pkcs1 = try directory.read("rsa1.pem")
        XCTAssertTrue(pkcs1.contains("BEGIN RSA PRIVATE KEY"))
        assertImport(pkcs1, throws: .rsaKey)
        XCTAssertTrue(KeyImportError.rsaKey.description(naming: "AuthKey_X.p8")
            .hasPrefix("AuthKey_X.p8 is an RSA key; Apple Sign in keys are"))
    }

    func testP384KeyIsRefusedNamingTheCurve() throws {
        try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "p384.pem"],
                           in: directory)
        assertImport(try directory.read("p384.pem"), throws: .wrongCurve("P-384"))
        XCTAssertTrue(KeyImportError.wrongCurve("P-384").description.contains("P-384"))
    }

    func testEd25519KeyIsRefused() throws {
        try OpenSSLCLI.run(["genpkey", "-algorithm", "ED25519", "-out", "ed.pem"], in: directory)
        assertImport(try directory.read("ed.pem"), throws: .ed25519Key)
    }

    func testEncryptedPKCS8IsRefused() throws {
        _ = try makeP256Key()
        try OpenSSLCLI.run(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:x", "-in", "p256.p8",
                            "-out", "enc.pem"], in: directory)
        let pem = try directory.read("enc.pem")
        XCTAssertTrue(pem.contains("BEGIN ENCRYPTED PRIVATE KEY"))
        assertImport(pem, throws: .encryptedKey)
    }

    func testCertificateIsRefused() throws {
        _ = try makeP256Key()
        try OpenSSLCLI.run(["req", "-x509", "-new", "-key", "p256.p8", "-subj", "/CN=gatehouse-test", "-days", "1",
                            "-out", "cert.pem"], in: directory)
        assertImport(try directory.read("cert.pem"), throws: .certificate)
    }

    func testPublicKeyIsRefused() throws {
        _ = try makeP256Key()
        try OpenSSLCLI.run(["pkey", "-in", "p256.p8", "-pubout", "-out", "pub.pem"], in: directory)
        assertImport(try directory.read("pub.pem"), throws: .publicKey)
    }

    func testSEC1KeyIsRefusedWithConversionAdvice() throws {
        try OpenSSLCLI.run(["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", "sec1.pem"], in: directory)
        let pem = try directory.read("sec1.pem")
        XCTAssertTrue(pem.contains("BEGIN EC PRIVATE KEY"))
        assertImport(pem, throws: .sec1ECKey)
        XCTAssertTrue(KeyImportError.sec1ECKey.description
            .contains("openssl pkcs8 -topk8 -nocrypt -in key.pem -out AuthKey_XXXXXXXXXX.p8"))
        // Without -noout, an EC PARAMETERS block comes first.
        try OpenSSLCLI.run(["ecparam", "-genkey", "-name", "prime256v1", "-out", "sec1params.pem"], in: directory)
        assertImport(try directory.read("sec1params.pem"), throws: .sec1ECKey)
        // And the advice works: the converted file is accepted.
        try OpenSSLCLI.run(["pkcs8", "-topk8", "-nocrypt", "-in", "sec1.pem", "-out", "converted.p8"], in: directory)
        XCTAssertNoThrow(try P256.PrivateKey(pemRepresentation: directory.read("converted.p8")))
    }

    func testNotPEMIsRefused() {
        assertImport("this is not a key", throws: .notPEM)
        assertImport("{\"kty\":\"EC\",\"crv\":\"P-256\"}", throws: .notPEM)
        assertImport("MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", throws: .notPEM)
    }

    func testEmptyFileIsRefused() {
        assertImport("", throws: .emptyFile)
        assertImport(" \n\r\n\t ", throws: .emptyFile)
        assertImport("\u{FEFF}", throws: .emptyFile)
    }

    func testCorruptBase64IsRefused() throws {
        let pem = try makeP256Key()
        var lines = pem.split(separator: "\n").map(String.init)
        lines[1] = String(lines[1].prefix(10)) + "*!" + String(lines[1].dropFirst(12))
        assertImport(lines.joined(separator: "\n"), throws: .corruptBase64)
    }

    func testTruncatedFileIsRefused() throws {
        let pem = try makeP256Key()
        let lines = pem.split(separator: "\n").map(String.init)
        XCTAssertGreaterThanOrEqual(lines.count, 4)
        // Cut before the END line.
        assertImport(lines.prefix(2).joined(separator: "\n") + "\n", throws: .truncated)
        // Lines lost in the middle, END line kept: the DER is shorter than it says.
        let missingMiddle = [lines[0], lines[1], lines[lines.count - 1]].joined(separator: "\n")
        assertImport(missingMiddle, throws: .truncated)
    }

    func testGarbageDERIsRefused() {
        let body = Base64.encode([0x30, 0x2E] + [UInt8](repeating: 0x41, count: 46))
        assertImport("-----BEGIN PRIVATE KEY-----\n\(body)\n-----END PRIVATE KEY-----\n", throws: .malformedKey)
    }

    func testOtherPEMLabelIsNamed() {
        assertImport("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
                     throws: .unexpectedPEMLabel("CERTIFICATE REQUEST"))
    }

    func testPublicKeyImportRefusesPrivateKeyAndOtherCurves() throws {
        let pem = try makeP256Key()
        XCTAssertThrowsError(try P256.PublicKey(pemRepresentation: pem)) { error in
            XCTAssertEqual(error as? KeyImportError, .privateKeyWhereExpectedPublic)
        }
        try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "p384.pem"],
                           in: directory)
        try OpenSSLCLI.run(["pkey", "-in", "p384.pem", "-pubout", "-out", "p384pub.pem"], in: directory)
        XCTAssertThrowsError(try P256.PublicKey(pemRepresentation: directory.read("p384pub.pem"))) { error in
            XCTAssertEqual(error as? KeyImportError, .wrongCurve("P-384"))
        }
    }

    func testEveryMessageSaysWhatToDo() {
        let all: [KeyImportError] = [
            .emptyFile, .notPEM, .truncated, .corruptBase64, .malformedKey, .rsaKey, .wrongCurve("P-384"),
            .ed25519Key, .unsupportedAlgorithm("DSA"), .encryptedKey, .certificate, .publicKey,
            .privateKeyWhereExpectedPublic, .sec1ECKey, .unexpectedPEMLabel("X"),
        ]
        let descriptions = Set(all.map(\.description))
        XCTAssertEqual(descriptions.count, all.count, "two errors share a message")
        for error in all {
            XCTAssertTrue(error.description.hasPrefix("the key file "), error.description)
            XCTAssertTrue(error.description(naming: "AuthKey_A.p8").hasPrefix("AuthKey_A.p8 "))
        }
    }
}
