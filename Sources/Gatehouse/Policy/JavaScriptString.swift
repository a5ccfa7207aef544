/// JavaScript's `String.prototype.toLowerCase()` and `===`, the two operations Better Auth 1.7.1 applies to emails.
///
/// Better Auth lowercases the provider's email and compares it with the stored one by code units:
/// `userInfo.email.toLowerCase() === dbUser.user.email` and `findUserByEmail(email.toLowerCase())`
/// (packages/better-auth/src/oauth2/link-account.ts `handleOAuthUserInfo`, db/internal-adapter.ts `findUserByEmail`),
/// `linkingUserInfo.user.email?.toLowerCase() !== session.user.email.toLowerCase()` (api/routes/account.ts
/// `linkSocialAccount`), `userInfo.email?.toLowerCase() !== link.email.toLowerCase()` (api/routes/callback.ts
/// `callbackOAuth`). Swift differs on both halves: `String.==` treats canonically equivalent strings as equal
/// (`é` composed and `e` + U+0301 are one `Character`), and `lowercased()` maps every `Σ` to `σ` where JavaScript
/// writes `ς` at the end of a word. So every prediction of a Better Auth outcome compares through this type.
///
///     JavaScriptString.toLowerCase("ΟΔΟΣ")                                   // "οδος" (final sigma)
///     JavaScriptString.sameEmail("jos\u{E9}@x.com", "jose\u{301}@x.com")     // false: different code units
///
/// Tested against a table JavaScript itself produced (Tests/Fixtures/js-strings, made by its generate.js with node).
public enum JavaScriptString {
    /// `text.toLowerCase()`: the full, locale-independent Unicode lowercase mapping of every code point
    /// (SpecialCasing's unconditional mappings included: `İ` → `i̇`), with the one context-dependent rule
    /// JavaScript applies, Final_Sigma: `Σ` becomes `ς` after a cased letter (case-ignorable characters between)
    /// when no cased letter follows (case-ignorable characters between), `σ` otherwise.
    public static func toLowerCase(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        for index in scalars.indices {
            let scalar = scalars[index]
            if scalar == "\u{03A3}" {
                out.append(isFinalSigma(scalars, at: index) ? "\u{03C2}" : "\u{03C3}")
            } else {
                out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            }
        }
        return String(out)
    }

    /// `a === b`: equal UTF-16 code units, which for Swift's always-valid strings means equal Unicode scalars.
    /// No normalisation: composed and decomposed letters differ.
    public static func strictEquals(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.elementsEqual(b.unicodeScalars)
    }

    /// `a.toLowerCase() === b.toLowerCase()`: whether Better Auth takes two emails for the same.
    public static func sameEmail(_ a: String, _ b: String) -> Bool {
        strictEquals(toLowerCase(a), toLowerCase(b))
    }

    /// Whether two texts differ to JavaScript but are canonically equivalent to Swift (and to a person reading them).
    public static func differOnlyByNormalisation(_ a: String, _ b: String) -> Bool {
        let (x, y) = (toLowerCase(a), toLowerCase(b))
        return !strictEquals(x, y) && x == y
    }

    /// Unicode's Final_Sigma condition (Unicode §3.13, table 3-17) for the `Σ` at `index`.
    static func isFinalSigma(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        var before = index - 1
        while before >= 0, scalars[before].properties.isCaseIgnorable { before -= 1 }
        guard before >= 0, scalars[before].properties.isCased else { return false }
        var after = index + 1
        while after < scalars.count, scalars[after].properties.isCaseIgnorable { after += 1 }
        return !(after < scalars.count && scalars[after].properties.isCased)
    }
}
