import Foundation
import XCTest

/// A password in a store URI goes nowhere: not into a message, a file name, the start line of `serve` (the journal,
/// under systemd) or the command line other users read with `ps`.
final class StorePasswordTests: XCTestCase {
    static let password = "Hunter2-leak-check"

    /// The output and files of `gatehouse ARGUMENTS` run in a fresh, empty folder.
    func runInEmptyFolder(_ arguments: [String], environment: [String: String] = [:]) throws -> (CLI.Result, [String]) {
        let scratch = try Scratch()
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "GATEHOUSE_STORE")
        env.removeValue(forKey: "GATEHOUSE_MASTER_KEY")
        env["GATEHOUSE_KEY_DIR"] = scratch.path("keys")
        for (key, value) in environment { env[key] = value }
        let result = try Tool.run(CLI.binary, arguments, environment: env, in: scratch.url.path)
        return (result, try FileManager.default.contentsOfDirectory(atPath: scratch.url.path))
    }

    func testMisspeltSchemesAreRefusedAsSuchNeverTakenAsAFileName() throws {
        let password = Self.password
        let misspelt = [
            "postgresql:/ops:\(password)@db.internal/auth", "postgresq://ops:\(password)@db.internal/auth",
            "pg://ops:\(password)@db.internal/auth", " postgres://ops:\(password)@db.internal/auth",
            "mysql://ops:\(password)@db.internal/auth", "postgres:ops:\(password)@db.internal/auth",
            "ops:\(password)@db.internal/auth", "sqlite:\(password).sqlite", "d1://account/\(password)",
            "postgresql//ops:\(password)@db.internal/auth", "//ops:\(password)@db.internal/auth", "./ops:\(password)@db.internal/auth",
        ]
        for store in misspelt {
            for command in [["init"], ["status"], ["serve", "--listen", "127.0.0.1:0"]] {
                let (result, files) = try runInEmptyFolder(command + ["--store", store])
                XCTAssertEqual(result.status, 2, "\(command) --store \(store): \(result.all)")
                XCTAssertFalse(result.all.contains(password), "\(command) --store \(store) printed the password: \(result.all)")
                XCTAssertFalse(result.all.contains("no store at"), "\(store) was taken as a file name: \(result.all)")
                XCTAssertEqual(files, [], "\(command) --store \(store) created files")
            }
            // From the environment too: the same refusal.
            let (result, files) = try runInEmptyFolder(["init"], environment: ["GATEHOUSE_STORE": store])
            XCTAssertEqual(result.status, 2, "GATEHOUSE_STORE=\(store): \(result.all)")
            XCTAssertFalse(result.all.contains(password), result.all)
            XCTAssertEqual(files, [])
        }
        let (d1, _) = try runInEmptyFolder(["status", "--store", "d1://account/db"])
        XCTAssertTrue(d1.stderr.contains("the account id in a d1:// store"), d1.stderr)
        let (typo, _) = try runInEmptyFolder(["status", "--store", "pg://ops:\(password)@db/auth"])
        XCTAssertTrue(typo.stderr.contains(#"starts with "pg:""#) && typo.stderr.contains("misspelt"), typo.stderr)
        // A colon in a plain file name is still a file name.
        let (plain, files) = try runInEmptyFolder(["init", "--store", "backup:2026.sqlite"])
        XCTAssertEqual(plain.status, 0, plain.all)
        XCTAssertTrue(files.contains("backup:2026.sqlite"), "\(files)")
    }

    func testTheStoreCanComeFromAPrivateFile() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try CLI().run(["init", "--store", store]).status, 0)
        let file = scratch.path("store-uri")
        try (store + "\n").write(toFile: file, atomically: true, encoding: .utf8)

        chmod(file, 0o644)
        let exposed = try CLI().run(["status", "--store-file", file])
        XCTAssertEqual(exposed.status, 1, exposed.all)
        XCTAssertTrue(exposed.stderr.contains("readable by other users") && exposed.stderr.contains("chmod 600 \(file)"), exposed.stderr)
        XCTAssertFalse(exposed.all.contains(store), "the file's content is never quoted: \(exposed.all)")

        chmod(file, 0o600)
        let fromOption = try CLI().run(["status", "--store-file", file])
        XCTAssertEqual(fromOption.status, 0, fromOption.all)
        let fromEnvironment = try CLI(environment: ["GATEHOUSE_STORE_FILE": file]).run(["status"])
        XCTAssertEqual(fromEnvironment.status, 0, fromEnvironment.all)
        XCTAssertEqual(try CLI().run(["status", "--store-file", file, "--store", store]).status, 2)
        XCTAssertEqual(try CLI(environment: ["GATEHOUSE_STORE_FILE": file, "GATEHOUSE_STORE": store]).run(["status"]).status, 2)

        let help = try CLI().run(["serve", "--help"])
        XCTAssertTrue(help.stdout.contains("--store-file") && help.stdout.contains("GATEHOUSE_STORE_FILE") && help.stdout.contains("GATEHOUSE_STORE "), help.stdout)
    }

    /// `serve` on Postgres with the password in `--store`: the start line masks it, and once the console is up
    /// `/proc/PID/cmdline` (what `ps` shows) no longer holds it. With `--store-file`, no warning.
    func testServeHidesThePasswordFromItsStartLineAndFromPs() throws {
        let scratch = try Scratch()
        let database = try TestStore.make(.postgres, in: scratch)
        defer { database.drop() }
        XCTAssertEqual(try CLI(environment: TestStore.environment.merging(["GATEHOUSE_STORE": database.location]) { $1 }).run(["init"]).status, 0)
        // The test cluster trusts the `gatehouse` role over its socket: the password is carried, and ignored.
        XCTAssertTrue(database.location.hasPrefix("postgresql://gatehouse@"), database.location)
        let uri = database.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://gatehouse:\(Self.password)@")
        let uriFile = scratch.path("store-uri")
        XCTAssertTrue(FileManager.default.createFile(atPath: uriFile, contents: Data(uri.utf8), attributes: [.posixPermissions: 0o600]))

        for storeArguments in [["--store", uri], ["--store=" + uri], ["--store-file", uriFile]] {
            let process = try CLI(environment: TestStore.environment).start(["serve", "--listen", "127.0.0.1:0"] + storeArguments)
            var startLine: String?
            for _ in 0..<200 where startLine == nil {
                Thread.sleep(forTimeInterval: 0.05)
                let printed = (try? String(contentsOf: process.out, encoding: .utf8)) ?? ""
                startLine = printed.split(separator: "\n").first { $0.hasPrefix("Gatehouse console on") }.map(String.init)
                if !process.process.isRunning { break }
            }
            let pid = process.process.processIdentifier
            let commandLine = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data(), as: UTF8.self)
            kill(pid, SIGTERM)
            let result = try process.finish()
            let line = try XCTUnwrap(startLine, "serve \(storeArguments.first ?? "") did not start: \(result.all)")
            XCTAssertTrue(line.contains("postgresql://gatehouse:***@"), line)
            XCTAssertFalse(result.all.contains(Self.password), "serve printed the password: \(result.all)")
            XCTAssertTrue(commandLine.contains("serve"), "the command line was read: \(commandLine)")
            XCTAssertFalse(commandLine.contains(Self.password), "ps shows the password: \(commandLine)")
            let warned = result.stderr.contains("warning: the store URI on the command line holds a password")
            XCTAssertEqual(warned, storeArguments[0] != "--store-file", result.stderr)
        }
    }
}
