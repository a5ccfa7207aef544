/// A CBOR data item (RFC 8949), limited to what WebAuthn carries: integers, byte and text strings, arrays, maps with
/// integer or text keys, and the simple values false, true and null.
///
///     let value = try CBORReader().read(attestationObject)
///     value.map?[.text("fmt")]?.text   // "none"
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the integer −1 − n, kept as n so that every CBOR negative integer fits.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (valid UTF-8).
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map; key order is not kept (keys are unique).
    case map([CBORKey: CBORValue])
    /// Simple values 20 and 21.
    case bool(Bool)
    /// Simple value 22.
    case null

    /// The integer, when this is one that fits in an `Int64`.
    public var int64: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    /// The bytes, when this is a byte string.
    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    /// The string, when this is a text string.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The entries, when this is a map.
    public var map: [CBORKey: CBORValue]? {
        if case .map(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var array: [CBORValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
}

/// A map key: COSE keys use integers, the attestation object text.
public enum CBORKey: Sendable, Hashable, CustomStringConvertible {
    /// A non-negative integer key.
    case unsigned(UInt64)
    /// The key −1 − n.
    case negative(UInt64)
    /// A text key.
    case text(String)

    /// The key for a small integer: `.int(-7)` is `.negative(6)`.
    public static func int(_ value: Int64) -> CBORKey {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    public var description: String {
        switch self {
        case .unsigned(let n): return String(n)
        case .negative(let n): return n < UInt64(Int64.max) ? String(-1 - Int64(n)) : "-1-\(n)"
        case .text(let text): return "\"\(text)\""
        }
    }
}

/// Why bytes are not a CBOR item this reader accepts. Each case says where (the byte offset) and what.
public enum CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends inside an item.
    case truncated(offset: Int)
    /// Bytes follow the item where none may.
    case trailingBytes(offset: Int)
    /// A length or count larger than the bytes left could hold.
    case lengthExceedsInput(offset: Int)
    /// An indefinite-length string, array or map (additional information 31), or a break byte.
    case indefiniteLength(offset: Int)
    /// Additional information 28–30, reserved by RFC 8949.
    case reservedAdditionalInformation(offset: Int)
    /// An argument not in its shortest form (e.g. 5 written as 0x18 0x05).
    case notShortestForm(offset: Int)
    /// A tag (major type 6): WebAuthn's structures use none.
    case tagNotSupported(offset: Int)
    /// A simple value other than false, true and null, or a float.
    case simpleValueNotSupported(offset: Int)
    /// A text string that is not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// A map key that is neither an integer nor a text string.
    case unsupportedMapKey(offset: Int)
    /// The same key twice in one map.
    case duplicateMapKey(offset: Int, key: CBORKey)
    /// Items nested deeper than the reader's limit.
    case tooDeep(offset: Int, limit: Int)
    /// Input larger than the reader's limit.
    case tooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): return "CBOR ends inside an item (at byte \(offset))"
        case .trailingBytes(let offset): return "CBOR has bytes after the item (from byte \(offset))"
        case .lengthExceedsInput(let offset): return "a CBOR length at byte \(offset) is larger than the bytes left"
        case .indefiniteLength(let offset): return "CBOR indefinite lengths are not accepted (byte \(offset))"
        case .reservedAdditionalInformation(let offset):
            return "CBOR additional information 28-30 is reserved (byte \(offset))"
        case .notShortestForm(let offset): return "a CBOR integer at byte \(offset) is not in its shortest form"
        case .tagNotSupported(let offset): return "CBOR tags are not accepted (byte \(offset))"
        case .simpleValueNotSupported(let offset):
            return "only the CBOR simple values false, true and null are accepted (byte \(offset))"
        case .invalidUTF8(let offset): return "a CBOR text string at byte \(offset) is not valid UTF-8"
        case .unsupportedMapKey(let offset): return "a CBOR map key at byte \(offset) is neither an integer nor text"
        case .duplicateMapKey(let offset, let key): return "a CBOR map repeats the key \(key) (byte \(offset))"
        case .tooDeep(let offset, let limit): return "CBOR nests deeper than \(limit) levels (byte \(offset))"
        case .tooLarge(let size, let limit): return "CBOR input of \(size) bytes is over the limit of \(limit)"
        }
    }
}

/// A strict CBOR reader: definite lengths only, every length checked against the bytes left, integer arguments in
/// shortest form (RFC 8949 §4.2.1), no duplicate map keys, no tags, no floats, nesting and size bounded.
///
/// Map key order is not checked: CTAP2's canonical order and RFC 8949's deterministic order differ, and a map read
/// here means the same whichever order its (unique) keys came in.
///
///     let reader = CBORReader()
///     let object = try reader.read(bytes)                         // the whole input, one item
///     let (key, used) = try reader.readPrefix(bytes[37...])       // one item, then whatever follows
public struct CBORReader: Sendable {
    /// The deepest nesting accepted (an array in a map in a map is depth 3).
    public var maxDepth: Int
    /// The largest input accepted, in bytes.
    public var maxBytes: Int

    /// A reader with limits suited to attestation objects (which may carry certificate chains).
    public init(maxDepth: Int = 16, maxBytes: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// Reads exactly one item that spans all of `bytes`.
    public func read<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(CBORError) -> CBORValue {
        let input = Array(bytes)
        let (value, used) = try readPrefix(input)
        guard used == input.count else { throw .trailingBytes(offset: used) }
        return value
    }

    /// Reads one item from the start of `bytes`; returns it and how many bytes it took.
    public func readPrefix<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(CBORError) -> (CBORValue, Int) {
        let input = Array(bytes)
        guard input.count <= maxBytes else { throw .tooLarge(size: input.count, limit: maxBytes) }
        var cursor = Cursor(bytes: input, maxDepth: maxDepth)
        let value = try cursor.item(depth: 1)
        return (value, cursor.offset)
    }

    private struct Cursor {
        let bytes: [UInt8]
        let maxDepth: Int
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard offset < bytes.count else { throw .truncated(offset: offset) }
            defer { offset += 1 }
            return bytes[offset]
        }

        /// The head's argument for additional information `info`, checked for shortest form.
        mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0...23:
                return UInt64(info)
            case 24...27:
                let width = 1 << Int(info - 24)
                guard remaining >= width else { throw .truncated(offset: offset) }
                var value: UInt64 = 0
                for _ in 0..<width { value = value << 8 | UInt64(bytes[offset]); offset += 1 }
                // The smallest value that needs this width.
                let floor: UInt64 = width == 1 ? 24 : 1 << UInt64(width * 4)
                guard value >= floor else { throw .notShortestForm(offset: start) }
                return value
            case 31:
                throw .indefiniteLength(offset: start)
            default:
                throw .reservedAdditionalInformation(offset: start)
            }
        }

        /// A length or count, which must fit in what is left (each element takes at least one byte).
        mutating func length(_ info: UInt8, at start: Int) throws(CBORError) -> Int {
            let value = try argument(info, at: start)
            guard value <= UInt64(remaining) else { throw .lengthExceedsInput(offset: start) }
            return Int(value)
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            let start = offset
            guard depth <= maxDepth else { throw .tooDeep(offset: start, limit: maxDepth) }
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0:
                return .unsigned(try argument(info, at: start))
            case 1:
                return .negative(try argument(info, at: start))
            case 2:
                let count = try length(info, at: start)
                defer { offset += count }
                return .bytes(Array(bytes[offset..<offset + count]))
            case 3:
                let count = try length(info, at: start)
                guard let text = String(validating: bytes[offset..<offset + count], as: UTF8.self) else {
                    throw .invalidUTF8(offset: start)
                }
                offset += count
                return .text(text)
            case 4:
                let count = try length(info, at: start)
                var elements: [CBORValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                let count = try length(info, at: start)
                // A key and a value take at least two bytes.
                guard count <= remaining / 2 else { throw .lengthExceedsInput(offset: start) }
                var entries: [CBORKey: CBORValue] = [:]
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    let keyStart = offset
                    let key: CBORKey
                    switch try item(depth: depth + 1) {
                    case .unsigned(let n): key = .unsigned(n)
                    case .negative(let n): key = .negative(n)
                    case .text(let text): key = .text(text)
                    default: throw .unsupportedMapKey(offset: keyStart)
                    }
                    let value = try item(depth: depth + 1)
                    guard entries.updateValue(value, forKey: key) == nil else {
                        throw .duplicateMapKey(offset: keyStart, key: key)
                    }
                }
                return .map(entries)
            case 6:
                throw .tagNotSupported(offset: start)
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 31: throw .indefiniteLength(offset: start)  // a break with nothing to end
                case 28...30: throw .reservedAdditionalInformation(offset: start)
                default: throw .simpleValueNotSupported(offset: start)
                }
            }
        }
    }
}
