/// One of a fixed set of names (an export format, a side of a merge, a provider, a platform), parsed the same way
/// everywhere: exact, or case-insensitive with `-` read as `_`. A refusal lists the names and the closest one, and
/// each front end words it with its own spelling of the field (`--format` on the command line, `"format"` in a
/// console request); the domain words it for values named in prose ("unknown platform").
///
///     let format = try NamedChoice.parse(text, as: AppleExport.Format.self)   // throws NamedChoice.Refusal
public enum NamedChoice {
    /// A name that is not one of the choices.
    public struct Refusal: Error, Sendable, Equatable {
        /// What was given (shown only when the front end echoes it, and then at most 40 characters, escaped).
        public let given: String
        /// The accepted names, in their declared order.
        public let choices: [String]
        /// The accepted name closest to what was given, if one is close.
        public let suggestion: String?

        /// "`field` must be a or b" (or "must be one of a, b, c"), with `, got "…"` when `echo`, and the closest name.
        public func message(field: String, echo: Bool) -> String {
            let names = choices.count == 2 ? "\(choices[0]) or \(choices[1])" : "one of \(choices.joined(separator: ", "))"
            return "\(field) must be \(names)" + (echo ? ", got \"\(shownGiven)\"" : "") + (suggestion.map { "; did you mean \($0)?" } ?? "")
        }

        /// What was given, shortened and with control characters escaped, for messages that echo it.
        public var shownGiven: String { OperatorText.visible(String(given.prefix(40))) }
    }

    /// The case of `T` named by `text`.
    /// `caseSensitive` names take only their exact spelling (names an app writes in code, such as Better Auth's options).
    public static func parse<T: CaseIterable & RawRepresentable>(_ text: String, as type: T.Type = T.self, caseSensitive: Bool = false) throws(Refusal) -> T
    where T.RawValue == String {
        try parse(text, among: Array(T.allCases), name: \.rawValue, caseSensitive: caseSensitive)
    }

    /// The one of `choices` whose `name` is `text`.
    public static func parse<T>(_ text: String, among choices: [T], name: (T) -> String, caseSensitive: Bool = false) throws(Refusal) -> T {
        if let exact = choices.first(where: { name($0) == text }) { return exact }
        let normalized = text.lowercased().replacingOccurrences(of: "-", with: "_")
        if !caseSensitive, let folded = choices.first(where: { name($0).lowercased() == normalized }) { return folded }
        let names = choices.map(name)
        throw Refusal(given: text, choices: names, suggestion: Suggestion.closest(to: normalized, among: names))
    }
}
