@testable import D1Engine
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// Parsing and redaction of store URIs: no server needed.
final class PostgresURITests: XCTestCase {
    func testFullURI() throws {
        let uri = try PostgresURI("postgres://app:s3cret@db.internal:6543/auth?sslmode=require&application_name=ops")
        XCTAssertEqual(uri.user, "app")
        XCTAssertEqual(uri.password, "s3cret")
        XCTAssertEqual(uri.host, "db.internal")
        XCTAssertEqual(uri.port, "6543")
        XCTAssertEqual(uri.database, "auth")
        XCTAssertEqual(uri.sslMode, "require")
        XCTAssertEqual(uri.parameter("application_name"), "ops")
        XCTAssertEqual(uri.redacted, "postgresql://app:***@db.internal:6543/auth?sslmode=require&application_name=ops")
        XCTAssertEqual(uri.description, uri.redacted)
    }

    func testSocketDirectoryInQueryOrEncodedInAuthority() throws {
        let query = try PostgresURI("postgresql://gatehouse@/gatehouse_test?host=/tmp/gatehouse-pg.abc&port=5432")
        XCTAssertEqual(query.host, "/tmp/gatehouse-pg.abc")
        XCTAssertEqual(query.port, "5432")
        XCTAssertEqual(query.database, "gatehouse_test")
        XCTAssertEqual(query.redacted, "postgresql://gatehouse@/gatehouse_test?host=/tmp/gatehouse-pg.abc&port=5432")

        let encoded = try PostgresURI("postgresql://%2Fvar%2Frun%2Fpostgresql/auth")
        XCTAssertEqual(encoded.host, "/var/run/postgresql")
        XCTAssertEqual(encoded.database, "auth")
        XCTAssertNil(encoded.user)
        XCTAssertEqual(encoded.redacted, "postgresql:///auth?host=/var/run/postgresql")
    }

    func testPercentEncodedPasswordAndUser() throws {
        let uri = try PostgresURI("postgres://user%40corp:p%40ss%2Fw%3Ard@db/auth")
        XCTAssertEqual(uri.user, "user@corp")
        XCTAssertEqual(uri.password, "p@ss/w:rd")
        XCTAssertEqual(uri.host, "db")
        XCTAssertEqual(uri.redacted, "postgresql://user%40corp:***@db/auth")
    }

    func testSearchPathOptionsAndIPv6AndHostLists() throws {
        let options = try PostgresURI("postgresql://app@db/auth?options=-csearch_path%3Dauth")
        XCTAssertEqual(options.options, "-csearch_path=auth")
        XCTAssertEqual(options.redacted, "postgresql://app@db/auth?options=-csearch_path%3Dauth")

        let v6 = try PostgresURI("postgresql://[::1]:5433/auth")
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.port, "5433")
        XCTAssertEqual(v6.redacted, "postgresql://[::1]:5433/auth")

        let list = try PostgresURI("postgresql://primary:5432,replica:5433/auth?target_session_attrs=read-write")
        XCTAssertEqual(list.host, "primary,replica")
        XCTAssertEqual(list.port, "5432,5433")
        XCTAssertEqual(list.redacted, "postgresql:///auth?host=primary,replica&port=5432,5433&target_session_attrs=read-write")
    }

    func testMissingPartsAreLibpqDefaults() throws {
        for text in ["postgres://", "postgresql:///", "postgres://@", "postgres://localhost", "postgres://:5432/db",
                     "postgresql://user@", "postgresql://host:/db", "POSTGRESQL://Host/DB"] {
            XCTAssertNoThrow(try PostgresURI(text), text)
        }
        let empty = try PostgresURI("postgres://")
        XCTAssertNil(empty.user); XCTAssertNil(empty.password); XCTAssertNil(empty.host)
        XCTAssertNil(empty.port); XCTAssertNil(empty.database); XCTAssertEqual(empty.parameters, [])
        XCTAssertEqual(empty.redacted, "postgresql://")
        XCTAssertEqual(try PostgresURI("postgres://:5432/db").redacted, "postgresql:///db?port=5432")
        XCTAssertEqual(try PostgresURI("POSTGRESQL://Host/DB").database, "DB")
        // An empty password is a password (libpq then falls back to PGPASSWORD/.pgpass); it still reads ***.
        XCTAssertEqual(try PostgresURI("postgres://u:@h/d").redacted, "postgresql://u:***@h/d")
    }

    func testPasswordAsQueryKeyIsAPasswordToo() throws {
        let uri = try PostgresURI("postgresql://app@db/auth?password=hunter2hunter2&sslmode=verify-full")
        XCTAssertEqual(uri.password, "hunter2hunter2")
        XCTAssertFalse(uri.redacted.contains("hunter2"))
        XCTAssertEqual(uri.redacted, "postgresql://app:***@db/auth?sslmode=verify-full")
        XCTAssertTrue(uri.connectionKeywords.contains { $0 == ("password", "hunter2hunter2") })
    }

    func testIsPostgresURI() {
        for store in ["postgres://x", "postgresql://", "POSTGRES://db/auth", "PostgreSQL://db"] {
            XCTAssertTrue(PostgresURI.isPostgresURI(store), store)
        }
        for store in ["store.sqlite", "/var/lib/app/auth.sqlite", "postgres:/x", "postgres", "./postgres://x",
                      "file:postgres://x", "", "postgresql:", "mysql://db"] {
            XCTAssertFalse(PostgresURI.isPostgresURI(store), store)
        }
    }

    func testHostileInputsAreRefusedWithoutQuotingThem() {
        let secret = "Sup3rSecretValue"
        let cases: [(String, String)] = [
            ("postgres://u:\(secret)@h/" + String(repeating: "d", count: 5000), "longer than 4096"),
            ("postgres://u:\(secret)\n@h/d", "control character"),
            ("postgres://u:\(secret)@h/d\u{1B}[2J", "control character"),
            ("postgres://u:\(secret) x@h/d", "space"),
            ("postgres://u:\(secret)\u{85}@h/d", "control character"),
            ("postgres://u:\(secret)%zz@h/d", "password has a % that does not start"),
            ("postgres://u:\(secret)%4@h/d", "password has a % that does not start"),
            ("postgres://u:\(secret)%00@h/d", "password contains NUL"),
            ("postgres://u:\(secret)%ff@h/d", "password is not valid UTF-8"),
            ("postgres://u:\(secret)@h/d%0a", "database name contains a control character"),
            ("postgres://u:p@\(secret)@h/d", "@ that does not end"),
            ("postgres://u:pa/\(secret)@h/d", "@ that does not end"),
            ("postgres://u:pa?\(secret)@h/d", "@ that does not end"),
            ("postgres://u:pa#\(secret)@h/d", "fragment"),
            ("postgres://u:\(secret)@h:99999/d", "port that is not a number"),
            ("postgres://u:\(secret)@h:54x/d", "port that is not a number"),
            ("postgres://u:\(secret)@h:0/d", "port that is not a number"),
            ("postgres://u:\(secret)@[::1/d", "closing ]"),
            ("postgres://u:\(secret)@::1/d", "not in brackets"),
            ("postgres://u:\(secret)@h/d?sslmode", "without a value"),
            ("postgres://u:\(secret)@h/d?SSLMODE=require", "not a libpq connection keyword"),
            ("postgres://u:\(secret)@h/d?ssl%20mode=require", "not a libpq connection keyword"),
            ("postgres://u:\(secret)@h/d?sslmode=a&sslmode=b", "sslmode twice"),
            ("postgres://u:\(secret)@h/d?password=x", "password twice"),
            ("postgres://u@h/d?host=/tmp", "host twice"),
            ("postgres://u@h/d?client_encoding=LATIN1", "client_encoding"),
            ("mysql://u:\(secret)@h/d", "must start with postgres://"),
        ]
        for (text, expected) in cases {
            do {
                let uri = try PostgresURI(text)
                XCTFail("accepted \(uri.redacted)")
            } catch {
                XCTAssertEqual(error.kind, .uri)
                XCTAssertTrue(error.message.contains(expected), "\(error.message) should say \(expected)")
                for visible in visibleTexts(of: error) {
                    XCTAssertFalse(visible.contains(secret), "the error quotes the URI: \(visible.prefix(120))")
                    XCTAssertFalse(visible.contains("\n"), "the error is not one line")
                }
            }
        }
    }

    func testRedactionHidesEveryFormOfThePassword() throws {
        let passwords = ["s3cret", "p@ss", "with space", "ünïcödé", "a:b/c?d#e", "***", "%41"]
        for password in passwords {
            let encoded = PostgresURI.percentEncode(password, allowed: PostgresURI.unreservedBytes)
            for text in ["postgres://u:\(encoded)@h/d", "postgres://u@h/d?password=\(encoded)"] {
                let uri = try PostgresURI(text)
                XCTAssertEqual(uri.password, password)
                var dumped = ""
                dump(uri, to: &dumped)
                for visible in [uri.redacted, uri.description, "\(uri)", String(reflecting: uri), dumped, "\([uri])"] {
                    if password != "***" {
                        XCTAssertFalse(visible.contains(encoded), "\(password) appears encoded")
                        XCTAssertFalse(visible.contains(password), "\(password) appears")
                    }
                }
                XCTAssertTrue(uri.redacted.contains(":***@"))
            }
        }
    }

    func testScrubberHidesPasswordsAndLongBoundValues() {
        let scrubber = SecretScrubber(passwords: ["p@ss word"], boundValues: ["alice@example.com", "abc"])
        XCTAssertEqual(scrubber.scrub("failed for p@ss word and p%40ss%20word\n  near \"alice@example.com\" abc"),
                       "failed for *** and *** near \"***\" abc")
        // A short password is hidden where it stands alone, not inside words; a long one everywhere.
        XCTAssertEqual(SecretScrubber(passwords: ["y"]).scrub("invalid connection option \"bogus_key\": \"y\" y"),
                       "invalid connection option \"bogus_key\": \"***\" ***")
        XCTAssertEqual(SecretScrubber(passwords: ["longpassword"]).scrub("xlongpasswordx"), "x***x")
    }
}
