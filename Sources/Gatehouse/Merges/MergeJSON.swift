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
