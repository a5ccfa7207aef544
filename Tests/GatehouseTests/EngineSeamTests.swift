import XCTest

/// The engine seam holds: outside the engines' own folders and the one place that picks the engine
/// (`Gatehouse/Store/StoreLocation.swift`), no source file names a concrete engine type. A new engine (D1 is next) then
/// adds a folder and touches the picker, instead of answering `as? SQLiteDatabase` in a dozen domain files.
///
/// Files not moved yet are listed in `notYetMoved`, each with why; the list only shrinks. A file that no longer names an
/// engine type must leave the list too, so it cannot hide a new leak later.
final class EngineSeamTests: XCTestCase {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The folders an engine's code lives in: its connection in `Storage/<Engine>/`, what it plugs into the domain in
    /// `Gatehouse/Engines/<Engine>/`.
    static let engineFolders = [
        "Storage/SQLite/", "Storage/Postgres/", "Storage/D1/",
        "Gatehouse/Engines/SQLite/", "Gatehouse/Engines/Postgres/", "Gatehouse/Engines/D1/",
    ]

    /// The one place that picks the engine from `--store`.
    static let picker = "Gatehouse/Store/StoreLocation.swift"

    /// Concrete types of `Storage/SQLite/` and `Storage/Postgres/` that the domain must not name.
    static let engineTypes = [
        "SQLiteDatabase", "DatabasePool", "DatabaseError", "SQLiteCode",
        "PostgresConnection", "PostgresError", "PostgresSQLState", "PostgresURI", "PostgresMigrator",
        "PostgresSessionLimits", "PostgresDeferredIndexes",
        "D1Connection", "D1Error", "D1Location", "D1Migrator", "D1Client", "D1Statement", "D1Guard", "D1JSON",
    ]

    /// Files that still name an engine type, each with the reason it has not moved yet. Shrinks; never grows.
    static let notYetMoved: [String: String] = [:]

    func testNoFileOutsideTheEnginesNamesAnEngineType() throws {
        let pattern = try NSRegularExpression(pattern: "\\b(" + Self.engineTypes.joined(separator: "|") + ")\\b")
        var leaks: [String: Set<String>] = [:]
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        let base = Self.sources.standardizedFileURL.path + "/"
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let path = String(url.standardizedFileURL.path.dropFirst(base.count))
            if path == Self.picker || Self.engineFolders.contains(where: path.hasPrefix) { continue }
            // Code only: a `///` comment may say which engine a capability exists for.
            let code = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            let names = pattern.matches(in: code, range: NSRange(code.startIndex..., in: code))
                .compactMap { Range($0.range, in: code).map { String(code[$0]) } }
            if !names.isEmpty { leaks[path] = Set(names) }
        }
        let unexpected = leaks.filter { Self.notYetMoved[$0.key] == nil }
            .map { "\($0.key) names \($0.value.sorted().joined(separator: ", "))" }.sorted()
        XCTAssert(unexpected.isEmpty, "outside the engines' folders and \(Self.picker), these name an engine type:\n" + unexpected.joined(separator: "\n"))
        let moved = Self.notYetMoved.keys.filter { leaks[$0] == nil }.sorted()
        XCTAssert(moved.isEmpty, "these no longer name an engine type; take them off notYetMoved:\n" + moved.joined(separator: "\n"))
    }
}
