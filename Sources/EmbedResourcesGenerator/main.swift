import Foundation

// Writes the Swift sources of the `EmbeddedResources` module; run by EmbedResourcesPlugin at build time.
//
//   EmbedResourcesGenerator files OUTPUT ROOT FOLDER...   every non-hidden file under ROOT/FOLDER, as literals
//   EmbedResourcesGenerator build-info OUTPUT ROOT        the commit and build date of the checkout at ROOT
//
// A file that is valid UTF-8 becomes a StaticString literal whose bytes are the file's exactly (every scalar
// outside printable ASCII written as \u{…}), so the migrator's checksums are unchanged and nothing is decoded
// at run time; any other file becomes base64. String literals, not array literals: they compile in no time.

/// Writes `text` to `path` only when it differs, so an unchanged output does not rebuild the module.
func write(_ text: String, to path: String) throws {
    if let existing = try? String(contentsOfFile: path, encoding: .utf8), existing == text { return }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

/// A Swift string literal whose UTF-8 is exactly `text`'s.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case " "..."~": out.unicodeScalars.append(scalar)
        default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
        }
    }
    return out + "\""
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EmbedResourcesGenerator: \(message)\n".utf8))
    exit(1)
}

func embedFiles(output: String, root: String, folders: [String]) throws {
    var entries: [String] = []
    for folder in folders {
        let base = URL(fileURLWithPath: root).appending(path: folder)
        guard let enumerator = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey],
                                                              options: [.skipsHiddenFiles]) else {
            fail("cannot read \(base.path)")
        }
        var paths: [String] = []
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            paths.append(String(url.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1)))
        }
        for relative in paths.sorted() {
            let bytes = try Data(contentsOf: base.appending(path: relative))
            let path = literal(folder + "/" + relative)
            if let text = String(data: bytes, encoding: .utf8), Data(text.utf8) == bytes {
                entries.append("        EmbeddedFile(path: \(path), text: \(literal(text))),")
            } else {
                entries.append("        EmbeddedFile(path: \(path), base64: \(literal(bytes.base64EncodedString()))),")
            }
        }
    }
    try write("""
        // Generated at build time by EmbedResourcesGenerator from \(folders.map { $0 + "/" }.joined(separator: " and ")); do not edit.
        extension EmbeddedResources {
            static let generated: [EmbeddedFile] = [
        \(entries.joined(separator: "\n"))
            ]
        }

        """, to: output)
}

/// The output of `git ARGS` in `root`, trimmed; nil when git is missing or fails (no checkout, no commit yet).
func git(_ arguments: [String], root: String) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["git", "-C", root] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return text.isEmpty ? nil : text
}

func buildInfo(output: String, root: String) throws {
    let environment = ProcessInfo.processInfo.environment
    let commit = environment["GATEHOUSE_BUILD_COMMIT"].flatMap { $0.isEmpty ? nil : $0 }
        ?? git(["rev-parse", "HEAD"], root: root) ?? "unknown"
    // The date is the commit's (or SOURCE_DATE_EPOCH's), never the clock's: the same commit builds the same
    // binary, and an edit that is not committed does not rerun this.
    let epoch: Int? = environment["SOURCE_DATE_EPOCH"].flatMap { Int($0) }
        ?? git(["log", "-1", "--format=%ct", "HEAD"], root: root).flatMap { Int($0) }
    var date = "unknown"
    if let epoch {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        date = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
    }
    try write("""
        // Generated at build time by EmbedResourcesGenerator; do not edit.
        extension BuildInfo {
            /// The git commit the binary was built from, or "unknown".
            public static let commit = \(literal(commit))
            /// The commit's date (or SOURCE_DATE_EPOCH's), ISO-8601 UTC, or "unknown".
            public static let date = \(literal(date))
        }

        """, to: output)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: EmbedResourcesGenerator files|build-info OUTPUT ROOT [FOLDER...]") }
do {
    switch arguments[1] {
    case "files": try embedFiles(output: arguments[2], root: arguments[3], folders: Array(arguments.dropFirst(4)))
    case "build-info": try buildInfo(output: arguments[2], root: arguments[3])
    default: fail("unknown mode \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
