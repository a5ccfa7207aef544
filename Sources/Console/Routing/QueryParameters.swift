import Gatehouse

extension RequestContext {
    /// An integer query item within bounds, or 400 naming it.
    public func integerQuery(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = query(name), !text.isEmpty else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw APIError.badRequest("?\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A time query item: ISO-8601 (`2026-11-01`, `2026-11-01T12:00:00Z`) or a duration before now (`24h`, `7d`).
    public func timeQuery(_ name: String) throws -> Timestamp? {
        guard let text = query(name), !text.isEmpty else { return nil }
        if let time = Timestamp(iso8601: text) { return time }
        let duration: Seconds
        do { duration = try Seconds.parse(text) } catch let error as GatehouseError where text.utf8.first.map({ $0 >= 0x30 && $0 <= 0x39 }) == true {
            // It reads as a duration: say what is wrong with it (too long, a unit it does not know, …).
            throw APIError.badRequest("?\(name): \(error.message)", fix: "give an ISO-8601 time or a duration of at most \(Seconds.maximum.value / 86_400)d, e.g. 24h or 7d")
        } catch where text.hasPrefix("-") {
            throw APIError.badRequest("?\(name) is a negative duration; it says how far back to look", fix: "use e.g. 24h or 7d, or an ISO-8601 time")
        } catch {
            throw APIError.badRequest("?\(name) is neither an ISO-8601 time nor a duration", fix: "use e.g. 2026-11-01, 2026-11-01T12:00:00Z, 24h or 7d")
        }
        return now.adding(seconds: -duration.value)
    }

    /// A named-choice query item (`?by=email`), empty meaning absent, or 400 listing the choices.
    public func choiceQuery<T: CaseIterable & RawRepresentable>(_ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        try APIError.choice(try textQuery(name, maxLength: 40), field: "?\(name)", as: T.self)
    }

    /// A text query item, empty meaning absent, refused over `maxLength` characters.
    public func textQuery(_ name: String, maxLength: Int = 200) throws -> String? {
        guard let text = query(name), !text.isEmpty else { return nil }
        guard text.count <= maxLength else { throw APIError.badRequest("?\(name) is longer than \(maxLength) characters") }
        return text
    }
}
