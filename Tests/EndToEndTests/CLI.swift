import Foundation
import XCTest

/// Runs the built `gatehouse` binary the way a user does and captures everything it says.
struct CLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var all: String { stdout + stderr }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["GATEHOUSE_BIN"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent(".build/debug/gatehouse").path
    }

    var environment: [String: String] = [:]

    /// Runs `gatehouse args...` to completion.
    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let process = try start(arguments, stdin: stdin)
        return try process.finish()
    }

    /// A started process, for concurrency tests.
    final class Running {
        let process: Process
        let out: URL
        let err: URL
        init(process: Process, out: URL, err: URL) {
            self.process = process
            self.out = out
            self.err = err
        }
        func finish() throws -> Result {
            process.waitUntilExit()
            defer {
                try? FileManager.default.removeItem(at: out)
                try? FileManager.default.removeItem(at: err)
            }
            return Result(status: process.terminationStatus,
                          stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                          stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        }
    }

    func start(_ arguments: [String], stdin: String? = nil) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "GATEHOUSE_STORE")
        env.removeValue(forKey: "GATEHOUSE_MASTER_KEY")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        // Files, not pipes: a chatty child can never block on a full pipe.
        let tmp = FileManager.default.temporaryDirectory
        let out = tmp.appendingPathComponent("gh-out-\(UUID().uuidString)"), err = tmp.appendingPathComponent("gh-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        if let stdin {
            let pipe = Pipe()
            process.standardInput = pipe
            try process.run()
            pipe.fileHandleForWriting.write(Data(stdin.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        return Running(process: process, out: out, err: err)
    }
}

/// A temporary directory per test.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Runs the system's `sqlite3` shell, an independent reader of the store.
func sqlite3(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path]
    let pipe = Pipe(), input = Pipe()
    process.standardInput = input
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    input.fileHandleForWriting.write(Data((sql + "\n").utf8))
    try input.fileHandleForWriting.close()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func fixture(_ name: String) -> String {
    CLI.packageRoot.appendingPathComponent("Tests/Fixtures/\(name)").path
}
