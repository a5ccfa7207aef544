@testable import D1Engine
import Foundation
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Key files made with the `openssl` CLI (an independent implementation), one for each thing `apple key import`
/// must accept or refuse.
enum AppleKeyFiles {
    static let openssl: String = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/openssl"

    /// Runs openssl in `directory`; throws with its stderr when it fails.
    @discardableResult
    static func run(_ arguments: [String], in directory: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw GatehouseError("openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A fresh P-256 PKCS#8 key at `directory/AuthKey_<id>.p8`; returns the path.
    static func p256(_ id: String, in directory: String) throws -> String {
        let name = "AuthKey_\(id).p8"
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name], in: directory)
        return directory + "/" + name
    }

    /// The base64 body lines of a PEM file: what must never appear in any output.
    static func secretLines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && !$0.isEmpty }
    }

    /// Every kind of file import must refuse, as (file name, expected words in the message).
    static func refusals(in directory: String, good: String) throws -> [(path: String, words: String)] {
        func path(_ name: String) -> String { directory + "/" + name }
        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
            return path(name)
        }
        let goodText = try String(contentsOfFile: good, encoding: .utf8)
        var cases: [(String, String)] = []
        try run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "AuthKey_RSAKEY0001.p8"], in: directory)
        cases.append((path("AuthKey_RSAKEY0001.p8"), "is an RSA key"))
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "AuthKey_P384KEY001.p8"], in: directory)
        cases.append((path("AuthKey_P384KEY001.p8"), "P-384"))
        try run(["genpkey", "-algorithm", "ED25519", "-out", "AuthKey_ED25519001.p8"], in: directory)
        cases.append((path("AuthKey_ED25519001.p8"), "Ed25519"))
        try run(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:secret", "-in", good, "-out", "AuthKey_ENCRYPTED1.p8"], in: directory)
        cases.append((path("AuthKey_ENCRYPTED1.p8"), "encrypted"))
        try run(["req", "-new", "-x509", "-key", good, "-subj", "/CN=gatehouse-test", "-days", "1", "-out", "AuthKey_CERTIFIC01.p8"], in: directory)
        cases.append((path("AuthKey_CERTIFIC01.p8"), "certificate"))
        try run(["pkey", "-in", good, "-pubout", "-out", "AuthKey_PUBLICKEY1.p8"], in: directory)
        cases.append((path("AuthKey_PUBLICKEY1.p8"), "public key"))
        try run(["ec", "-in", good, "-out", "AuthKey_SEC1KEY001.p8"], in: directory)
        cases.append((path("AuthKey_SEC1KEY001.p8"), "openssl pkcs8 -topk8 -nocrypt"))
        cases.append((try write("AuthKey_NOTPEM0001.p8", Array("hello, this is not a key\n".utf8)), "is not PEM"))
        var lines = goodText.split(separator: "\n").map(String.init)
        lines[1] = String(lines[1].prefix(10)) + "!!!!" + String(lines[1].dropFirst(14))
        cases.append((try write("AuthKey_CORRUPT001.p8", Array((lines.joined(separator: "\n") + "\n").utf8)), "not valid base64"))
        cases.append((try write("AuthKey_EMPTY00001.p8", []), "is empty"))
        let truncated = goodText.split(separator: "\n").prefix(2).joined(separator: "\n") + "\n"
        cases.append((try write("AuthKey_TRUNCATED1.p8", Array(truncated.utf8)), "truncated"))
        cases.append((try write("AuthKey_BINARY0001.p8", (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 197 &+ 11) }), "is not PEM"))
        return cases
    }
}

/// Hand-made compact JWTs for diagnosis tests: any header, claims and signature bytes.
enum HandMadeJWT {
    static func encode(_ object: [String: JSONValue]) throws -> String { Base64URL.encode(try JSONValue.encode(object: object)) }

    static func make(header: [String: JSONValue], claims: [String: JSONValue], signature: [UInt8]) throws -> String {
        try encode(header) + "." + encode(claims) + "." + Base64URL.encode(signature)
    }

    /// Signs with ES256 but writes the signature as DER, as OpenSSL's EVP_DigestSign produces it.
    static func derSigned(header: [String: JSONValue], claims: [String: JSONValue], key: P256.PrivateKey) throws -> String {
        let input = try encode(header) + "." + encode(claims)
        let raw = try key.signature(for: input)
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return input + "." + Base64URL.encode([0x30, UInt8(body.count)] + body)
    }
}
