import XCTest

/// The engine seam holds where the compiler cannot see: `Storage`, `Gatehouse` and `Console` cannot import an engine
/// (none is among their dependencies, Package.swift), but the executable links every engine to register them, so
/// only its registration (`main.swift`) may import one; and no file outside the engines asks which engine it has by
/// comparing a dialect's name (but the registry, which finds an engine by it).
final class EngineSeamTests: XCTestCase {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The engines' modules and the C libraries only they link.
    static let engineModules = ["SQLiteEngine", "PostgresEngine", "D1Engine", "CSQLite", "CLibPQ"]

    /// Where an engine module may be imported: the engines themselves, and the executable's registration.
    static func mayImportEngines(_ path: String) -> Bool {
        path.hasPrefix("Engines/") || path == "gatehouse/main.swift"
    }

    /// The registry, which finds the engines that speak a connection's dialect by its name.
    static let registry = "Gatehouse/Store/StoreEngine.swift"

    /// Each Swift source under Sources/ with its path relative to it and its code (comment lines left out).
    static func sourceFiles() throws -> [(path: String, code: String)] {
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        let base = sources.standardizedFileURL.path + "/"
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let code = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            files.append((String(url.standardizedFileURL.path.dropFirst(base.count)), code))
        }
        return files
    }

    func testOnlyTheRegistrationImportsAnEngine() throws {
        let pattern = try NSRegularExpression(pattern: "^\\s*(@testable\\s+)?import\\s+(" + Self.engineModules.joined(separator: "|") + ")\\b",
                                              options: .anchorsMatchLines)
        let leaks = try Self.sourceFiles().filter { file in
            !Self.mayImportEngines(file.path) && pattern.firstMatch(in: file.code, range: NSRange(file.code.startIndex..., in: file.code)) != nil
        }.map(\.path).sorted()
        XCTAssert(leaks.isEmpty, "these import an engine outside Sources/Engines/ and gatehouse/main.swift:\n" + leaks.joined(separator: "\n"))
    }

    /// libcurl's declarations reach the domain through `HTTPClient` (Apple's calls need it), so the compiler would let
    /// a domain file import them: only `HTTPClient` does.
    func testOnlyHTTPClientImportsLibcurl() throws {
        let pattern = try NSRegularExpression(pattern: "^\\s*(@testable\\s+)?import\\s+CLibCurl\\b", options: .anchorsMatchLines)
        let leaks = try Self.sourceFiles().filter { file in
            !file.path.hasPrefix("HTTPClient/") && pattern.firstMatch(in: file.code, range: NSRange(file.code.startIndex..., in: file.code)) != nil
        }.map(\.path).sorted()
        XCTAssert(leaks.isEmpty, "these import CLibCurl outside Sources/HTTPClient/:\n" + leaks.joined(separator: "\n"))
    }

    func testNoFileOutsideTheEnginesAsksWhichEngineItHas() throws {
        let pattern = try NSRegularExpression(pattern: "dialect\\.name\\s*[!=]=|[!=]=\\s*[A-Za-z.]*dialect\\.name|sqlite_master|pg_catalog|pg_class")
        let leaks = try Self.sourceFiles().filter { file in
            !file.path.hasPrefix("Engines/") && file.path != Self.registry && pattern.firstMatch(in: file.code, range: NSRange(file.code.startIndex..., in: file.code)) != nil
        }.map(\.path).sorted()
        XCTAssert(leaks.isEmpty, "these ask which engine they have (a dialect's name, an engine's catalog) outside Sources/Engines/:\n" + leaks.joined(separator: "\n"))
    }
}
