/// Checks for what operators type into the gate's commands: evidence and reasons, and dates.
public enum GateInput {
    /// The longest evidence or reason kept, in Unicode scalars (SQLite's `length()`).
    public static let maxTextLength = 2000
    /// How far ahead an expiry may be: Apple memberships renew yearly, so anything further is a typo.
    public static let maxYearsAhead = 5

    /// Evidence or a reason, checked: not blank, at most `maxTextLength`, no invisible formatting, and no control
    /// characters but, when `multiline`, newline and tab. `label` names it in the
    /// error ("the evidence", "the reason"); `field` is the input that carries it.
    public static func text(_ value: String, label: String, field: InputField, multiline: Bool = false) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw GatehouseError.invalid("\(label) is empty", fix: "pass \(field: field) \"what you checked and where, e.g. the ticket or the portal page\"")
        }
        let length = trimmed.unicodeScalars.count
        guard length <= maxTextLength else {
            throw GatehouseError.invalid("\(label) is \(length) characters; at most \(maxTextLength) are kept",
                                         fix: "shorten it and link the ticket or document instead")
        }
        return try OperatorText.check(trimmed, field: label, multiline: multiline)
    }

    /// A date or time as operators write it: `YYYY-MM-DD` (midnight UTC, the start of that day) or a full
    /// ISO-8601 time. Refuses impossible calendar dates (2027-02-30) and years outside 2000–2100.
    public static func date(_ text: String, field: InputField) throws -> Timestamp {
        let invalid = GatehouseError.invalid("\(field: field) \"\(shown(text))\" is not a date",
                                             fix: "write it as YYYY-MM-DD (UTC), e.g. 2027-03-01, or as an ISO-8601 time, e.g. 2027-03-01T00:00:00Z")
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 10, trimmed.count <= 40, let time = Timestamp(iso8601: trimmed) else { throw invalid }
        // Timestamp accepts any day 1–31; the calendar date must round-trip to be real.
        let day = String(trimmed.prefix(10))
        guard let midnight = Timestamp(iso8601: day), midnight.iso8601.hasPrefix(day) else {
            throw GatehouseError.invalid("\(field: field) \"\(shown(text))\": \(day) is not a day of the calendar", fix: "check the date")
        }
        guard let year = Int(day.prefix(4)), (2000...2100).contains(year) else {
            throw GatehouseError.invalid("\(field: field) \"\(shown(text))\" is out of range (years 2000 to 2100)", fix: "check the date")
        }
        return time
    }

    /// Operator input echoed in an error: at most 60 characters, one line.
    static func shown(_ text: String) -> String {
        let flat = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return flat.count > 60 ? String(flat.prefix(59)) + "…" : flat
    }
}
