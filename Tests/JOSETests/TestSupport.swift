import Foundation
import XCTest

/// The package root, found from this file's path: Tests/JOSETests/TestSupport.swift.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// What a child process printed and how it ended.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A scratch directory removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("jose-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String {
        let path = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func write(_ name: String, bytes: [UInt8]) throws -> String {
        let path = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func read(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }
}

/// Runs `executable` with `arguments`; output goes through files so a chatty child can never block on a pipe.
func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> ProcessResult {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("jose-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outURL = scratch.appendingPathComponent("out")
    let errURL = scratch.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let outHandle = try FileHandle(forWritingTo: outURL)
    let errHandle = try FileHandle(forWritingTo: errURL)

    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = outHandle
    process.standardError = errHandle
    process.standardInput = FileHandle.nullDevice
    if let directory { process.currentDirectoryURL = directory }
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: try String(contentsOf: outURL, encoding: .utf8),
        stderr: try String(contentsOf: errURL, encoding: .utf8))
}

/// The `openssl` command-line tool, an independent implementation to make fixtures with.
enum OpenSSLCLI {
    static let path: String = {
        for candidate in ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "/usr/bin/openssl"
    }()

    /// Runs `openssl args…` in `directory`, failing the test if it exits non-zero.
    @discardableResult
    static func run(_ arguments: [String], in directory: TemporaryDirectory, file: StaticString = #filePath,
                    line: UInt = #line) throws -> String {
        let result = try JOSETests.run(path, arguments, in: directory.url)
        guard result.status == 0 else {
            XCTFail("openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return result.stdout
    }
}

/// Python with `cryptography` and `PyJWT`: `GATEHOUSE_TEST_PYTHON`, else `<package root>/.venv/bin/python`.
enum TestPython {
    /// No usable interpreter: the test fails (it never passes silently without its independent check).
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func interpreter() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"], !configured.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: configured) else {
                let missing = Missing(description: "GATEHOUSE_TEST_PYTHON=\(configured) is not executable: "
                    + "run ops/test, which creates .venv")
                XCTFail(missing.description)
                throw missing
            }
            return configured
        }
        let venv = packageRoot.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            let missing = Missing(description: "no Python for the interoperability tests (GATEHOUSE_TEST_PYTHON "
                + "unset and \(venv) absent): run ops/test, which creates .venv")
            XCTFail(missing.description)
            throw missing
        }
        return venv
    }

    /// Runs `script` with `arguments` (in `sys.argv[1:]`); fails the test if Python exits non-zero.
    static func run(_ script: String, _ arguments: [String] = [], file: StaticString = #filePath,
                    line: UInt = #line) throws -> String {
        let result = try JOSETests.run(interpreter(), ["-c", script] + arguments)
        guard result.status == 0 else {
            XCTFail("python failed (\(result.status)): \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
