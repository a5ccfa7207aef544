@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// Searches on a Postgres store read indexes, in byte order whatever the database's collation.
final class PostgresSearchPlanTests: XCTestCase {
    /// A database sorted by a language's rules (ICU en-US), as managed Postgres databases usually are: Better Auth's
    /// unique email index cannot serve a byte-ordered prefix range there, so `init` adds one that can.
    func testEmailPrefixSearchIsAnIndexRangeInByteOrderOnALanguageCollatedDatabase() throws {
        let admin = try TestPostgres.connect()
        let name = TestPostgres.uniqueTable("gh_icu")
        do {
            try admin.executeScript("CREATE DATABASE \(name) TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
        } catch {
            throw XCTSkip("this Postgres has no ICU collations: \(error)")
        }
        defer { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let uri = try TestPostgres.uri(database: name)
        setenv("GATEHOUSE_KEY_DIR", NSTemporaryDirectory() + "gatehouse-search-plan-keys", 1)
        let (store, report) = try Store.initialize(path: uri, actor: Actor("tester"))
        XCTAssertTrue(report.indexesCreated.contains("gatehouse_user_email_idx"), "\(report.indexesCreated)")
        _ = try DemoSeeder(seed: 1, anchor: Timestamp.now()).seed(store, users: 3000)
        // Emails that sort differently by bytes and by en-US rules: upper case, punctuation, accents.
        for (index, email) in ["Ana.B@x.io", "ana_c@x.io", "ana-d@x.io", "anä@x.io", "anb@x.io", "an@x.io"].enumerated() {
            try store.db.execute("INSERT INTO \"user\" (id, name, email, \"emailVerified\", \"createdAt\", \"updatedAt\") VALUES (?, 'T', ?, ?, now(), now())",
                                 ["collation-\(index)", email, 1])
        }
        try store.db.execute("ANALYZE \"user\"")

        let sql = UserDirectory.emailPrefixSQL(store.schema, dialect: store.db.dialect, bounded: true)
        let plan = try store.db.rows("EXPLAIN " + sql, ["ana", "anb", 20]).compactMap { $0[0].string }.joined(separator: "\n")
        XCTAssertTrue(plan.contains("Index") && plan.contains("gatehouse_user_email_idx"), plan)
        XCTAssertFalse(plan.contains("Seq Scan"), plan)
        XCTAssertFalse(plan.contains("Sort"), plan)

        // The same users as a byte-wise reading of every email (any part of it, case aside), in byte order; by default
        // the addresses starting with the query (as bytes, in lower case) first.
        let every = try store.db.rows("SELECT id, email FROM \"user\"").compactMap { row in row[1].string.map { (row[0].string ?? "", $0) } }
        let byBytes = { (a: (String, String), b: (String, String)) in Array(a.1.utf8).lexicographicallyPrecedes(Array(b.1.utf8)) }
        for prefix in ["ana", "an", "a", "ANA", "z", "anä"] {
            let matching = every.filter { NameSearch.contains(Array($0.1.lowercased().utf8), Array(prefix.lowercased().utf8)) }
            let inEmailOrder = matching.sorted(by: byBytes).prefix(20).map(\.0)
            let found = try UserDirectory(store: store).search(prefix, by: .email, limit: 20, sort: .email).users.map(\.id.rawValue)
            XCTAssertEqual(found, Array(inEmailOrder), prefix)
            let start = prefix.lowercased()
            let startFirst = (matching.filter { $0.1.hasPrefix(start) }.sorted(by: byBytes) + matching.filter { !$0.1.hasPrefix(start) }.sorted(by: byBytes))
                .prefix(20).map(\.0)
            let byDefault = try UserDirectory(store: store).search(prefix, by: .email, limit: 20).users.map(\.id.rawValue)
            XCTAssertEqual(byDefault, Array(startFirst), "\(prefix), the start first")
        }
    }
}
