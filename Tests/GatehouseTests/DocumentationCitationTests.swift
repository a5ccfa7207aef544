import Foundation
import XCTest

/// Every file path and test name the project's documents cite exists, so a reader who follows one lands somewhere.
///
/// Documents: `README.md`, `Sources/README.md`, `Sources/DECISIONS.md`, `ops/*.md`, `ops/runbooks/*.md`,
/// `migrations/README.md` and `Public/js/pages/README.md`. Citations are read from inline code spans, fenced code
/// blocks and link targets:
/// - a path from the repository's root (`Sources/…`, `Tests/…`, `ops/…`, `Public/…`, `migrations/…`, `.ci/…`, or a
///   top-level file such as `Package.swift`) must exist; `File.swift:LINE` (or `:FIRST-LAST`) must have that many
///   lines; a `*` must match a file. Placeholders (`Storage/<Engine>/`, `…`) are not checked.
/// - in a document below the root, a path whose first folder is beside the document (`Gatehouse/Store/Store.swift`
///   in `Sources/README.md`) must exist there;
/// - a link target is resolved from the document's folder;
/// - a test name (`UsersCommandsTests`, `HeldLockTests.testSomething`, `Tests/EndToEndTests/EngineParityTests`) must
///   be a test target or a type declared in `Tests/` (in that target's folder when one is named), and a method the
///   citation names must be declared where the type is.
final class DocumentationCitationTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().standardizedFileURL.path

    /// Folders a path cited from the root starts with.
    static let rootFolders = ["Sources/", "Tests/", "ops/", "Public/", "migrations/", ".ci/"]
    /// Top-level files a document may cite by name alone.
    static let topLevelFiles: Set<String> = ["Package.swift", "Package.resolved", "README.md", "Makefile", "LICENSE"]

    func testEveryCitedPathAndTestNameExists() throws {
        let documents = try Self.documents()
        XCTAssertTrue(documents.contains("Sources/DECISIONS.md"), "Sources/DECISIONS.md is missing")
        let declarations = Self.declarations
        XCTAssertNotNil(declarations["DocumentationCitationTests"], "the test types in Tests/ could not be read")
        var broken: [String] = []
        for document in documents {
            let text = try String(contentsOfFile: Self.root + "/" + document, encoding: .utf8)
            for (number, line, inFence) in Self.lines(of: text) {
                var seen: Set<String> = []
                for token in Self.tokens(line, inFence: inFence) where seen.insert(token).inserted {
                    if let problem = Self.checkPath(token, from: document) ?? Self.checkTestName(token, declarations) {
                        broken.append("\(document):\(number): `\(token)` \(problem)")
                    }
                }
                guard !inFence else { continue }
                for target in Self.captures(#"\]\(([^)\s]+)\)"#, in: line) {
                    if let problem = Self.checkLink(target, from: document) {
                        broken.append("\(document):\(number): link (\(target)) \(problem)")
                    }
                }
            }
        }
        XCTAssert(broken.isEmpty, "\(broken.count) citation(s) name nothing that exists:\n" + broken.joined(separator: "\n"))
    }

    /// The checker itself, on citations that exist and ones that do not.
    func testTheCheckerTellsCitationsThatExistFromOnesThatDoNot() throws {
        let declarations = Self.declarations
        XCTAssertNil(Self.checkPath("Sources/README.md", from: "README.md"))
        XCTAssertNil(Self.checkPath("Package.swift", from: "README.md"))
        XCTAssertNotNil(Self.checkPath("Package.swift:99999", from: "README.md"))
        XCTAssertNil(Self.checkPath("Tests/GatehouseTests/DocumentationCitationTests.swift:3", from: "README.md"))
        XCTAssertNotNil(Self.checkPath("Tests/GatehouseTests/DocumentationCitationTests.swift:99999", from: "README.md"))
        XCTAssertNotNil(Self.checkPath("Sources/Gatehouse/NoSuchFile.swift", from: "README.md"))
        XCTAssertNil(Self.checkPath("Storage/<Engine>/", from: "Sources/README.md"))
        XCTAssertNil(Self.checkPath("Gatehouse/Store/Store.swift", from: "Sources/README.md"))
        XCTAssertNotNil(Self.checkPath("Gatehouse/Store/NoSuchStore.swift", from: "Sources/README.md"))
        XCTAssertNil(Self.checkPath("migrations/sqlite/*.sql", from: "README.md"))
        XCTAssertNotNil(Self.checkPath("migrations/sqlite/*.nothing", from: "README.md"))
        XCTAssertNil(Self.checkTestName("DocumentationCitationTests", declarations))
        XCTAssertNil(Self.checkTestName("GatehouseTests", declarations))
        XCTAssertNil(Self.checkTestName("DocumentationCitationTests.testEveryCitedPathAndTestNameExists", declarations))
        XCTAssertNotNil(Self.checkTestName("DocumentationCitationTests.testNothing", declarations))
        XCTAssertNotNil(Self.checkTestName("NoSuchCitedTests", declarations))
        XCTAssertNil(Self.checkPath("Tests/GatehouseTests/DocumentationCitationTests", from: "README.md"))
        XCTAssertNotNil(Self.checkPath("Tests/ConsoleTests/DocumentationCitationTests", from: "README.md"))
        XCTAssertNil(Self.checkLink("../ops/PERFORMANCE.md", from: "Sources/DECISIONS.md"))
        XCTAssertNotNil(Self.checkLink("ops/PERFORMANCE.md", from: "Sources/DECISIONS.md"))
        XCTAssertNil(Self.checkLink("https://example.com/x", from: "README.md"))
        XCTAssertEqual(Self.tokens("run `ops/test --filter X` (see `A.swift:3`).", inFence: false),
                       ["ops/test", "--filter", "X", "A.swift:3"])
    }

    // MARK: - Documents

    /// The documents checked, relative to the root.
    static func documents() throws -> [String] {
        var documents = ["README.md", "Sources/README.md", "Sources/DECISIONS.md", "migrations/README.md", "Public/js/pages/README.md"]
        for folder in ["ops", "ops/runbooks"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)
            documents += names.filter { $0.hasSuffix(".md") }.sorted().map { folder + "/" + $0 }
        }
        return documents.filter { FileManager.default.fileExists(atPath: root + "/" + $0) }
    }

    /// Each line with its number and whether it is inside a fenced code block (fence lines themselves are skipped).
    static func lines(of text: String) -> [(Int, String, Bool)] {
        var result: [(Int, String, Bool)] = []
        var inFence = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inFence.toggle(); continue }
            result.append((index + 1, String(line), inFence))
        }
        return result
    }

    /// The words of a line's code spans (of the whole line inside a fence), trimmed of punctuation around them.
    static func tokens(_ line: String, inFence: Bool) -> [String] {
        let spans = inFence ? [line] : captures("``(.+?)``|`([^`]+)`", in: line)
        let separators = CharacterSet.whitespaces.union(CharacterSet(charactersIn: ",;()\"'="))
        return spans.flatMap { $0.components(separatedBy: separators) }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ".:;,)(")) }
            .filter { !$0.isEmpty }
    }

    // MARK: - Checks

    /// Why `token`, if it is a path, names nothing; nil when it exists or is not a path this test checks.
    static func checkPath(_ token: String, from document: String) -> String? {
        if token.rangeOfCharacter(from: CharacterSet(charactersIn: "<>…{}$|\\")) != nil { return nil }
        let file = token.replacingOccurrences(of: #":\d+([-–]\d+)?$"#, with: "", options: .regularExpression)
        let fromRoot = rootFolders.contains(where: token.hasPrefix) || topLevelFiles.contains(file)
        let folder = (document as NSString).deletingLastPathComponent
        var path: String
        if fromRoot {
            path = token
        } else if !folder.isEmpty, let first = token.split(separator: "/").first, token.contains("/"),
                  isDirectory(folder + "/" + first) {
            path = folder + "/" + token
        } else {
            return nil
        }
        var lastLine: Int?
        if let match = captureGroups(#"^(.+?):(\d+)(?:[-–](\d+))?$"#, in: path).first, let file = match[0] {
            path = file
            lastLine = [match[1], match[2]].compactMap { $0.flatMap { Int($0) } }.max()
        }
        return checkFile(path, lastLine: lastLine)
    }

    /// Why a link target, resolved from the document's folder, names nothing; nil for a URL or an anchor.
    static func checkLink(_ target: String, from document: String) -> String? {
        if target.hasPrefix("#") || !captures("^([a-z][a-z0-9+.-]*):", in: target).isEmpty { return nil }
        let file = String(target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let folder = (document as NSString).deletingLastPathComponent
        let joined = folder.isEmpty ? file : folder + "/" + file
        let normalized = URL(fileURLWithPath: root + "/" + joined).standardizedFileURL.path
        guard normalized.hasPrefix(root + "/") else { return "leaves the repository" }
        return checkFile(String(normalized.dropFirst(root.count + 1)), lastLine: nil)
    }

    /// Why `path` (from the root) names nothing: missing, no match for its `*`, or fewer lines than `lastLine`.
    static func checkFile(_ path: String, lastLine: Int?) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // `Tests/<Target>/<SomeTests>`: a test type named by its target's folder.
        if components.count == 3, components[0] == "Tests", components[2].hasSuffix("Tests"), !components[2].contains(".") {
            let files = declarations[components[2]] ?? []
            return files.contains(where: { $0.hasPrefix("Tests/\(components[1])/") }) ? nil
                : "no such file, and no test type \(components[2]) in Tests/\(components[1])/"
        }
        if let last = components.last, last.contains("*") {
            let folder = components.dropLast().joined(separator: "/")
            let pattern = "^" + NSRegularExpression.escapedPattern(for: last).replacingOccurrences(of: "\\*", with: ".*") + "$"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? []
            return names.contains(where: { !captures("(" + pattern + ")", in: $0).isEmpty }) ? nil : "no file matches"
        }
        let full = root + "/" + path
        guard FileManager.default.fileExists(atPath: full) else { return "no such file" }
        if let lastLine, !isDirectory(path) {
            let text = (try? String(contentsOfFile: full, encoding: .utf8)) ?? ""
            let count = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            if count < lastLine { return "has \(count) lines, not \(lastLine)" }
        }
        return nil
    }

    /// Why `token`, if it names a test (`XTests`, `XTests.testY`, `XTests/testY`), names none; nil when it exists or is
    /// no test name.
    static func checkTestName(_ token: String, _ declarations: [String: [String]]) -> String? {
        guard let match = captureGroups(#"^([A-Z][A-Za-z0-9_]*Tests)(?:[./](test[A-Za-z0-9_]*))?(?:\(\))?$"#, in: token).first,
              let type = match[0] else { return nil }
        let files = declarations[type] ?? []
        if files.isEmpty && !isDirectory("Tests/" + type) { return "is no test target and no type declared in Tests/" }
        guard let method = match[1] else { return nil }
        let declared = files.contains { file in
            let text = (try? String(contentsOfFile: root + "/" + file, encoding: .utf8)) ?? ""
            return !captures(#"func\s+("# + method + #")\b"#, in: text).isEmpty
        }
        return declared ? nil : "\(type) declares no method \(method)"
    }

    // MARK: - Support

    /// Every type declared or extended in `Tests/`, with the files (from the root) that do it; read once.
    static let declarations: [String: [String]] = {
        var result: [String: [String]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root + "/Tests")
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift"),
                  let text = try? String(contentsOfFile: root + "/Tests/" + relative, encoding: .utf8) else { continue }
            for name in captures(#"\b(?:class|struct|enum|actor|extension)\s+([A-Za-z_][A-Za-z0-9_]*)"#, in: text) {
                result[name, default: []].append("Tests/" + relative)
            }
        }
        return result
    }()

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &directory) && directory.boolValue
    }

    /// The first non-nil capture group of each match of `pattern` in `text`.
    static func captures(_ pattern: String, in text: String) -> [String] {
        captureGroups(pattern, in: text).compactMap { $0.compactMap { $0 }.first }
    }

    /// Every capture group of each match of `pattern` in `text` (nil where a group did not take part).
    static func captureGroups(_ pattern: String, in text: String) -> [[String?]] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (1..<max(match.numberOfRanges, 1)).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) }
            }
        }
    }
}
