import Foundation

/// What a `users search` query is matched against.
public enum UserQueryKind: String, Sendable, Codable, CaseIterable {
    /// Email, case-insensitive, any part of the address (`UserSearchPager`).
    case email
    /// Display name, case- and accent-insensitive substring.
    case name
    /// Exact Better Auth user id.
    case id
    /// Sync-server sub `better_auth|<user id>`.
    case sub
    /// A provider's account id (`account.accountId`): finds the owning user.
    case account
}

/// Checks operator input before it reaches a query, and recognises what a query is.
///
/// Every value is bound as a parameter, never spliced into SQL; operator input reaches `LIKE` only with its
/// wildcards escaped (`UserSearchPager.escapeLike`) and never reaches `GLOB`, so `%`, `_`, `*` and quotes are ordinary
/// characters.
public enum UserQuery {
    /// The longest query accepted, in UTF-8 bytes (an email address is at most 254).
    public static let maxBytes = 512

    /// `text` without leading and trailing spaces and tabs: what `trimmingCharacters(in: .whitespaces)` removes
    /// (general category Zs, U+0009 and U+200B ZERO WIDTH SPACE), without the NSString bridge that cost every
    /// lookup half a millisecond.
    static func trimmingHorizontalSpace(_ text: String) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// The trimmed query, or an error for empty, over-long, non-UTF-8 or control-character input.
    public static func validate(_ text: String, what: String = "the query") throws -> String {
        let trimmed = trimmingHorizontalSpace(text)
        guard !trimmed.isEmpty else {
            throw GatehouseError.invalid("\(what) is empty", fix: "give (part of) an email, a name, a user id, a sub better_auth|<id> or a provider account id")
        }
        guard trimmed.utf8.count <= maxBytes else {
            throw GatehouseError.invalid("\(what) is \(trimmed.utf8.count) bytes long; at most \(maxBytes) are accepted",
                                         fix: "search by a shorter part of the email or name")
        }
        if trimmed.unicodeScalars.contains("\u{FFFD}") {
            throw GatehouseError.invalid("\(what) \(display(trimmed)) is not valid UTF-8 text",
                                         fix: "check the terminal's or the script's encoding; emails, names and ids are UTF-8")
        }
        if trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw GatehouseError.invalid("\(what) \(display(trimmed)) contains control characters", fix: "remove them")
        }
        return trimmed
    }

    /// The kinds tried for a query given without `--by`, most specific first.
    public static func recognise(_ text: String) -> [UserQueryKind] {
        if text.hasPrefix(SyncSub.prefix) { return [.sub] }
        if text.contains("@") { return [.email] }
        let isAlphanumeric = text.unicodeScalars.allSatisfy { ($0.value < 0x80) && (CharacterSet.alphanumerics.contains($0)) }
        if text.count == 32 && isAlphanumeric { return [.id, .account] }
        if text.count >= 6 && text.allSatisfy({ $0.isASCII && $0.isNumber }) { return [.account] }
        if looksLikeAppleAccountID(text) { return [.account] }
        return [.email, .name]
    }

    /// Apple's stable user identifier: `000123.0123456789abcdef0123456789abcdef.0123`.
    static func looksLikeAppleAccountID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 6, parts[2].count == 4, parts[1].count == 32 else { return false }
        return parts[0].allSatisfy(\.isNumber) && parts[2].allSatisfy(\.isNumber) && parts[1].allSatisfy(\.isHexDigit)
    }

    /// Operator input quoted for a message: at most 60 characters, control characters escaped.
    public static func display(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(60) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return "\"" + out + (text.unicodeScalars.count > 60 ? "…" : "") + "\""
    }

    /// The smallest string greater than every string that starts with `prefix`, for an index range
    /// `column >= prefix AND column < bound`; nil when there is none (every scalar is U+10FFFF).
    /// UTF-8 orders bytes as it orders scalars, so SQLite's BINARY collation agrees.
    public static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var out = String.UnicodeScalarView()
                out.append(contentsOf: scalars)
                return String(out)
            }
        }
        return nil
    }
}
