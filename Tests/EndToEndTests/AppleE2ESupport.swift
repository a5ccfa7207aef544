import Foundation
import XCTest

/// Independent tools for the Apple end-to-end tests: the openssl CLI and Python with PyJWT.
enum AppleTools {
    /// Runs an executable; returns (status, stdout, stderr).
    static func run(_ executable: String, _ arguments: [String], in directory: String? = nil, stdin: String? = nil) throws -> (Int32, String, String) {
        let result = try Tool.run(executable, arguments, in: directory, stdin: stdin)
        return (result.status, result.stdout, result.stderr)
    }

    /// openssl with `arguments` in `directory`; fails the test on a non-zero exit.
    @discardableResult
    static func openssl(_ arguments: [String], in directory: String) throws -> String {
        let (status, out, err) = try run("/usr/bin/openssl", arguments, in: directory)
        guard status == 0 else { XCTFail("openssl \(arguments.joined(separator: " ")): \(err)"); throw CocoaError(.fileReadUnknown) }
        return out
    }

    /// A fresh P-256 PKCS#8 key at `directory/AuthKey_<id>.p8`.
    static func p256Key(_ id: String, in directory: String) throws -> String {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "AuthKey_\(id).p8"], in: directory)
        return directory + "/AuthKey_\(id).p8"
    }

    /// The base64 body lines of a PEM file.
    static func secretLines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") }
    }

    /// Python with PyJWT: `GATEHOUSE_TEST_PYTHON`, else `.venv/bin/python`. Fails (never skips) when missing.
    static func python() throws -> String {
        let configured = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? ""
        let path = configured.isEmpty ? CLI.packageRoot.appendingPathComponent(".venv/bin/python").path : configured
        guard FileManager.default.isExecutableFile(atPath: path) else {
            XCTFail("no Python for the PyJWT cross-checks at \(path): run ops/test, which creates .venv")
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    /// Runs a Python script with arguments; fails the test on a non-zero exit; returns trimmed stdout.
    static func python(_ script: String, _ arguments: [String] = [], stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let (status, out, err) = try run(try python(), ["-c", script] + arguments, stdin: stdin)
        guard status == 0 else { XCTFail("python: \(err)", file: file, line: line); throw CocoaError(.fileReadUnknown) }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
