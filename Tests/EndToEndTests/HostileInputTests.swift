import Foundation
import XCTest

/// Input from a hostile or careless local user: FIFOs and devices where files are expected, text that would rewrite
/// a terminal or read as something it is not, and a store on a read-only filesystem.
final class HostileInputTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
    }

    /// Every path Gatehouse reads is refused at once when it is a FIFO or a device (a FIFO would block forever).
    func testFIFOsAndDevicesAreRefusedNotReadForever() throws {
        let fifo = scratch.path("AuthKey_FIFOFIFO01.p8")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let cases: [([String], String)] = [
            (["status", "--store", fifo], "the store \(fifo) is a FIFO"),
            (["status", "--store", "/dev/zero"], "the store /dev/zero is a character device"),
            (["init", "--store", "/dev/null"], "the store /dev/null is a character device"),
            (["apple", "key", "import", fifo, "--team-id", "TEAM123456", "--store", store], "the key file \(fifo) is a FIFO"),
            (["apple", "key", "import", "/dev/urandom", "--key-id", "ABCDE12345", "--team-id", "TEAM123456", "--store", store], "is a character device"),
            (["token", "inspect", "a.b.c", "--jwks", fifo, "--store", store], "the JWKS file \(fifo) is a FIFO"),
            (["status", "--store", store, "--config", fifo], "the configuration file \(fifo) is a FIFO"),
            (["admins", "add", "ops2", "--password-file", fifo, "--store", store], "is a FIFO"),
        ]
        for (arguments, words) in cases {
            let started = Date()
            let result = try cli.run(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.all)")
            XCTAssertTrue(result.stderr.contains(words), "\(arguments): \(result.stderr)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "\(arguments) waited on the FIFO")
        }
        // The master key file replaced by a FIFO: reading a sealed key fails at once too.
        let keyFile = store + ".key"
        try FileManager.default.removeItem(atPath: keyFile)
        XCTAssertEqual(mkfifo(keyFile, 0o600), 0)
        let key = try AppleTools.p256Key("ABCDE12345", in: scratch.url.path)
        let result = try cli.run(["apple", "key", "import", key, "--team-id", "TEAM123456", "--store", store])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("the master key file \(keyFile) is a FIFO"), result.stderr)
    }

    /// Tickets, reasons, evidence and actors with control characters or bidi/zero-width characters are refused,
    /// and nothing is written for them.
    func testControlAndInvisibleCharactersAreRefusedInOperatorText() throws {
        let before = try sqlite3(store, "SELECT count(*) FROM gatehouse_audit;")
        let cases: [([String], String)] = [
            (["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "ok\u{1B}[2J"], "control characters (U+001B"),
            (["merge", "apply", "1", "--ticket", "SUP-1\nfake audit line", "--yes"], "control characters (U+000A"),
            (["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-\u{202E}4321"], "invisible formatting character U+202E"),
            (["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "fine", "--actor", "ops\u{07}"], "control characters (U+0007"),
            (["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "fine", "--actor", "ops\r\nroot"], "control characters (U+000D"),
            (["gates", "enable", "apple", "--platform", "ios", "--reason", "go\u{200B}live"], "invisible formatting character U+200B"),
            (["gates", "set", "apple", "membership", "met", "--evidence", "portal \u{2066}x\u{2069}"], "invisible formatting character U+2066"),
            (["merge", "apply", "1", "--ticket", "SUP-\u{202E}1234", "--yes"], "invisible formatting character U+202E"),
            (["merge", "apply", "1", "--ticket", "SUP-1\u{1B}]0;owned\u{07}", "--yes"], "control characters (U+001B"),
            (["merge", "undo", "1", "--reason", "oops\u{FEFF}"], "invisible formatting character U+FEFF"),
        ]
        for (arguments, words) in cases {
            let result = try cli.run(arguments + ["--store", store])
            XCTAssertTrue([1, 2].contains(result.status), "\(arguments): \(result.all)")
            XCTAssertTrue(result.stderr.contains(words), "\(arguments): \(result.stderr)")
            XCTAssertFalse(result.all.contains("\u{1B}"), "an escape reached the terminal: \(arguments)")
        }
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit;"), before)
    }

    /// Values another writer put in the store reach the terminal with their control characters made visible.
    func testStoredControlCharactersAreShownNotObeyed() throws {
        _ = try sqlite3(store, #"INSERT INTO gatehouse_audit (at, actor, action, subject, details, prev_hash, hash) VALUES ('2026-12-01T00:00:00.000Z', 'evil' || char(27) || '[31m', 'x.y', 'bell' || char(7) || char(13) || 'fake', '{"k":"v' || char(27) || ']0;t' || char(7) || '"}', 'p', 'h');"#)
        let list = try cli.run(["audit", "--store", store])
        XCTAssertEqual(list.status, 0, list.all)
        XCTAssertFalse(list.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, list.stdout)
        XCTAssertTrue(list.stdout.contains(#"evil\u{001B}[31m"#), list.stdout)
        XCTAssertTrue(list.stdout.contains(#"bell\u{0007}\u{000D}fake"#), list.stdout)
    }

    /// Read commands work on a store on a read-only filesystem; writes fail with a clear line.
    func testReadCommandsWorkOnAReadOnlyFilesystem() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting a read-only filesystem needs root (ops/test and CI run as root)") }
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "20", "--store", store, "-q"]).status, 0)
        let mountPoint = scratch.path("ro")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        XCTAssertEqual(try Tool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", mountPoint]).status, 0)
        defer { _ = try? Tool.run("/bin/umount", [mountPoint]) }
        for suffix in ["", ".key"] { try FileManager.default.copyItem(atPath: store + suffix, toPath: mountPoint + "/s.sqlite" + suffix) }
        XCTAssertEqual(try Tool.run("/bin/mount", ["-o", "remount,ro", mountPoint]).status, 0)
        let readOnly = mountPoint + "/s.sqlite"
        for arguments in [["status"], ["users", "search", "example.com"], ["audit", "verify"], ["policy", "show"], ["accounts", "check"], ["gates"]] {
            let result = try cli.run(arguments + ["--store", readOnly])
            XCTAssertTrue([0, 1].contains(result.status), "\(arguments): \(result.all)")
            XCTAssertFalse(result.stderr.contains("cannot open the store"), "\(arguments): \(result.all)")
            XCTAssertFalse(result.stdout.isEmpty, "\(arguments): \(result.all)")
        }
        let write = try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "t", "--store", readOnly])
        XCTAssertEqual(write.status, 1, write.all)
        XCTAssertTrue(write.stderr.contains("read-only"), write.stderr)
    }

    /// A seed that fills the disk says how many users it committed, and the store holds exactly those.
    func testSeedStoppedByAFullDiskSaysWhatItCommitted() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting a small filesystem needs root (ops/test and CI run as root)") }
        let mountPoint = scratch.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        XCTAssertEqual(try Tool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]).status, 0)
        defer { _ = try? Tool.run("/bin/umount", [mountPoint]) }
        let small = mountPoint + "/s.sqlite"
        XCTAssertEqual(try cli.run(["init", "--store", small]).status, 0)
        let result = try cli.run(["demo", "seed", "--users", "50000", "--store", small, "-q"])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("is full"), result.stderr)
        XCTAssertFalse(result.stderr.contains("nothing was written"), result.stderr)
        let said = result.stderr.components(separatedBy: "after ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
        XCTAssertNotNil(said, result.stderr)
        let users = try sqlite3(small, #"SELECT count(*) FROM "user";"#)
        XCTAssertEqual(Int(users), said, "the message and the store disagree: \(result.stderr)")
        XCTAssertGreaterThan(said ?? 0, 0)
    }
}
