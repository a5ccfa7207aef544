import Foundation

/// A JSON value, as found in JOSE headers, JWT claims and JWKs.
///
/// Parsing goes through Foundation's `JSONSerialization`; encoding is done here, compactly and deterministically
/// (object keys sorted), with integral numbers written as integers (`"exp":1700000000`, never `1.7e9`).
///
///     let claims: [String: JSONValue] = ["iss": "ABCDE12345", "iat": 1_700_000_000, "admin": true]
///     claims["iat"]?.intValue   // 1700000000
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Any JSON number (integers are exact up to 2^53).
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member order is not kept (encoding sorts keys).
    case object([String: JSONValue])

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is one.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int64`, if this is a number with no fractional part that fits (a NumericDate, say).
    public var int64Value: Int64? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
              value >= -9_007_199_254_740_992, value <= 9_007_199_254_740_992
        else { return nil }
        return Int64(value)
    }

    /// The number as an `Int`, if it is integral and fits.
    public var intValue: Int? {
        int64Value.flatMap { Int(exactly: $0) }
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key`, if this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A number from an integer (seconds since the epoch, say).
    public static func integer<Integer: BinaryInteger>(_ value: Integer) -> JSONValue {
        .number(Double(value))
    }
}

// MARK: - Parsing

/// Why bytes could not be read as the JSON expected.
public enum JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not JSON at all.
    case notJSON
    /// The JSON is valid but its top level is not an object.
    case notAnObject

    public var description: String {
        switch self {
        case .notJSON: return "the text is not valid JSON"
        case .notAnObject: return "the JSON is not an object ({…})"
        }
    }
}

extension JSONValue {
    /// Parses any JSON text (UTF-8).
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw JSONParseError.notJSON
        }
        guard let value = JSONValue(foundation: object) else { throw JSONParseError.notJSON }
        return value
    }

    /// Parses a JSON object, the shape of every JOSE header, claims set and JWK.
    public static func parseObject(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        guard let object = try parse(bytes).objectValue else { throw JSONParseError.notAnObject }
        return object
    }

    /// Converts what `JSONSerialization` returns. Booleans come back as `NSNumber`s whose type code is `c`.
    init?(foundation object: Any) {
        switch object {
        case is NSNull:
            self = .null
        case let string as String:
            self = .string(string)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" {
                self = .bool(number.boolValue)
            } else {
                self = .number(number.doubleValue)
            }
        case let array as [Any]:
            var elements: [JSONValue] = []
            elements.reserveCapacity(array.count)
            for element in array {
                guard let value = JSONValue(foundation: element) else { return nil }
                elements.append(value)
            }
            self = .array(elements)
        case let dictionary as [String: Any]:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let value = JSONValue(foundation: element) else { return nil }
                members[key] = value
            }
            self = .object(members)
        default:
            return nil
        }
    }
}

// MARK: - Encoding

/// A value that JSON cannot represent.
public struct JSONEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String { "JSON cannot represent NaN or infinity" }
}

extension JSONValue {
    /// Compact UTF-8 JSON with object keys in sorted order.
    public func encoded() throws -> [UInt8] {
        var out: [UInt8] = []
        try JSONValue.write(self, into: &out)
        return out
    }

    /// Compact JSON text for an object.
    public static func encode(object: [String: JSONValue]) throws -> [UInt8] {
        var out: [UInt8] = []
        try writeObject(object, into: &out)
        return out
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) throws {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            try writeNumber(number, into: &out)
        case .string(let string):
            writeString(string, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            try writeObject(members, into: &out)
        }
    }

    /// `members` as compact JSON text (a request body), the keys in the order `writeObject` writes them.
    public static func serialize(_ members: [String: JSONValue]) throws -> [UInt8] {
        var out: [UInt8] = []
        try writeObject(members, into: &out)
        return out
    }

    static func writeObject(_ members: [String: JSONValue], into out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "{"))
        try writeMembers(members, first: true, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// Writes `"key":value` pairs in key order, with a leading comma unless `first`; `skipping` leaves one key out.
    static func writeMembers(
        _ members: [String: JSONValue],
        first: Bool,
        skipping skipped: String? = nil,
        into out: inout [UInt8]
    ) throws {
        var needsComma = !first
        for member in members.sorted(by: { $0.key < $1.key }) where member.key != skipped {
            if needsComma { out.append(UInt8(ascii: ",")) }
            needsComma = true
            writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            try write(member.value, into: &out)
        }
    }

    static func writeNumber(_ number: Double, into out: inout [UInt8]) throws {
        guard number.isFinite else { throw JSONEncodingError() }
        if number.rounded(.towardZero) == number, abs(number) <= 9_007_199_254_740_992 {
            out.append(contentsOf: String(Int64(number)).utf8)
        } else {
            // Swift's description is the shortest text that reads back as the same Double, and is valid JSON.
            out.append(contentsOf: number.description.utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`; all other
    /// characters, non-ASCII included, as UTF-8.
    static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Claims are nearly always plain text: copy them whole when nothing needs escaping.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: string.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: Encodable {
    /// Encodes the value as the JSON it is (a whole number as an integer), for a response that carries stored JSON.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }
}
