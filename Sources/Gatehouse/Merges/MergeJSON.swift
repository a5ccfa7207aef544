import Foundation

/// The one JSON form merge plans and records are stored in: sorted keys, no escaped slashes.
enum MergeJSON {
    static func string<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, what: String) throws -> T {
        do { return try JSONDecoder().decode(type, from: Data(text.utf8)) } catch {
            throw GatehouseError("the stored \(what) cannot be read (\(error))", fix: "it was edited by hand or written by another version; plan again")
        }
    }
}

extension MergeJSON {
    /// JSON text that `MergeJSON`'s encoder wrote, kept so that it can stand inside a larger value without being
    /// encoded again: the undo record's entries are encoded before the merge's transaction and only assembled inside
    /// it (`MergeUndoJSON`). Only `MergeJSON` makes one, from a value it encodes or from fragments it assembles, so the
    /// text is always one whole JSON value in the encoder's own form (sorted keys, no whitespace, no escaped slashes).
    struct Fragment: Equatable, Sendable {
        /// The JSON text.
        let text: String
        fileprivate init(text: String) { self.text = text }
    }

    /// `value` encoded as the stored form spells it.
    static func fragment<T: Encodable>(_ value: T) throws -> Fragment { Fragment(text: try string(value)) }

    /// An object of `members`, its keys in the encoder's `.sortedKeys` order, as the encoder writes it:
    ///
    ///     MergeJSON.object(["step": step, "after": row])   // {"after":…,"step":…}
    ///
    /// Keys are encoded by the encoder itself (quotes and escapes are its own).
    static func object(_ members: [String: Fragment]) throws -> Fragment {
        var text = "{"
        for (index, key) in members.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            text += try string(key) + ":" + members[key]!.text
        }
        return Fragment(text: text + "}")
    }

    /// An array of `items` in order, as the encoder writes it.
    static func array(_ items: [Fragment]) -> Fragment {
        var text = "["
        text.reserveCapacity(items.reduce(2) { $0 + $1.text.utf8.count + 1 })
        for (index, item) in items.enumerated() {
            if index > 0 { text += "," }
            text += item.text
        }
        return Fragment(text: text + "]")
    }
}
