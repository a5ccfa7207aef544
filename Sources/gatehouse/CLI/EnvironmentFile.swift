import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `GATEHOUSE_ENV_FILE`: settings read from a file as data, the way systemd reads an `EnvironmentFile=`, for hosts
/// without systemd (the cron file). Nothing in it is run or expanded: `&`, `;`, `$` and backticks are characters of
/// the value, where a shell's `.` would run them or cut the value short.
///
/// Lines are `NAME=VALUE`; blank lines and lines starting with `#` or `;` are skipped; a value wholly in double
/// quotes loses them and reads `\"`, `\\`, `\$` and `` \` `` as the character; one wholly in single quotes loses
/// them and is taken as it is. A leading `-` on the path (`-/etc/gatehouse/gatehouse.env`) makes a missing file no
/// error, as systemd's `EnvironmentFile=-…` does. The file's settings override the process's environment.
///
///     GATEHOUSE_ENV_FILE=-/etc/gatehouse/gatehouse.env gatehouse health --record
enum EnvironmentFile {
    /// The variable that names the file.
    static let variable = "GATEHOUSE_ENV_FILE"
    /// A file larger than this is no settings file.
    static let maxBytes = 64 * 1024

    struct Failure: Error { let message: String }

    /// Reads the file `GATEHOUSE_ENV_FILE` names, if any, and sets its variables in this process.
    static func apply() throws {
        guard let named = getenv(variable).map({ String(cString: $0) }), !named.isEmpty else { return }
        let optional = named.hasPrefix("-")
        let path = optional ? String(named.dropFirst()) : named
        guard FileManager.default.fileExists(atPath: path) else {
            if optional { return }
            throw Failure(message: "\(variable) names \(path), which does not exist (prefix the path with - to make the file optional)")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(message: "cannot read \(path), which \(variable) names: give this user read access (e.g. mode 0640, group gatehouse)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxBytes + 1)) ?? Data()
        guard data.count <= maxBytes else { throw Failure(message: "\(path), which \(variable) names, is over \(maxBytes / 1024) KiB: not a settings file") }
        guard let text = String(data: data, encoding: .utf8) else { throw Failure(message: "\(path), which \(variable) names, is not UTF-8 text") }
        for (name, value) in try parse(text, path: path) { setenv(name, value, 1) }
    }

    /// The file's settings in order; a malformed line is refused by its number, never echoed (it may hold a password).
    static func parse(_ text: String, path: String) throws -> [(String, String)] {
        var settings: [(String, String)] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw Failure(message: "\(path) line \(index + 1) is not NAME=VALUE")
            }
            let name = String(trimmed[..<equals]).trimmingCharacters(in: .whitespaces)
            guard isName(name) else { throw Failure(message: "\(path) line \(index + 1): the name before = is not a variable name") }
            let value = try unquote(String(trimmed[trimmed.index(after: equals)...]).trimmingCharacters(in: .whitespaces),
                                    where: "\(path) line \(index + 1)")
            guard !value.contains("\0") else { throw Failure(message: "\(path) line \(index + 1): the value holds a NUL byte") }
            settings.append((name, value))
        }
        return settings
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return text.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    private static func unquote(_ value: String, where place: String) throws -> String {
        if value.count >= 2, value.hasPrefix("'"), value.hasSuffix("'") { return String(value.dropFirst().dropLast()) }
        guard value.hasPrefix("\"") else { return value }
        guard value.count >= 2, value.hasSuffix("\""), !value.hasSuffix("\\\"") || value.hasSuffix("\\\\\"") else {
            throw Failure(message: "\(place): a double quote is not closed")
        }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                if !"\"\\$`".contains(character) { result.append("\\") }
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        if escaped { result.append("\\") }
        return result
    }
}
