/// The shape Apple gives its Team IDs and Key IDs: exactly ten upper-case ASCII letters or digits.
enum AppleIdentifier {
    /// Whether `text` has the shape.
    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
    }

    /// Why `text` is not well formed, in words, without echoing more than 40 characters of it.
    static func problem(with text: String) -> String {
        let shown = "\"\(text.prefix(40))\(text.count > 40 ? "…" : "")\""
        if text.isEmpty { return "is empty" }
        if text.count != 10 { return "\(shown) has \(text.count) characters, not 10" }
        if text.uppercased() == text { return "\(shown) holds characters other than A–Z and 0–9" }
        return "\(shown) has lower-case letters (Apple writes them upper-case)"
    }
}
