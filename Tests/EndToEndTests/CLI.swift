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
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "GATEHOUSE_STORE")
        env.removeValue(forKey: "GATEHOUSE_MASTER_KEY")
        for (key, value) in environment { env[key] = value }
        return try Tool.start(CLI.binary, arguments, environment: env, stdin: stdin)
    }
}

/// Any program run as a child process, with stdout and stderr captured in files (not pipes, so a chatty
/// child can never block on a full pipe).
enum Tool {
    static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                      in directory: String? = nil, stdin: String? = nil) throws -> CLI.Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
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
        return CLI.Running(process: process, out: out, err: err)
    }

    /// Runs a program to completion.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    in directory: String? = nil, stdin: String? = nil) throws -> CLI.Result {
        try start(executable, arguments, environment: environment, in: directory, stdin: stdin).finish()
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

/// Runs the system's `sqlite3` shell, an independent reader of the store; SQL goes in on stdin.
func sqlite3(_ path: String, _ sql: String) throws -> String {
    let result = try Tool.run("/usr/bin/sqlite3", [path], stdin: sql + "\n")
    return (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
}

func fixture(_ name: String) -> String {
    CLI.packageRoot.appendingPathComponent("Tests/Fixtures/\(name)").path
}

/// A test case with a freshly initialised store and a `run` that passes `--store` and checks the exit status.
class InitialisedStoreTestCase: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        let initialised = try cli.run(["init", "--store", store])
        XCTAssertEqual(initialised.status, 0, initialised.all)
    }

    /// `gatehouse ARGUMENTS --store STORE`, expecting exit status `expected`.
    @discardableResult
    func run(_ arguments: [String], status expected: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        let result = try cli.run(arguments + ["--store", store])
        XCTAssertEqual(result.status, expected, "gatehouse \(arguments.joined(separator: " ").prefix(200)): \(result.all.prefix(3000))", file: file, line: line)
        return result
    }

    /// The JSON a command printed.
    func json(_ result: CLI.Result) throws -> Any { try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) }
}
